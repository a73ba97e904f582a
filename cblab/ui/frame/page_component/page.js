// The page's own browser side (no view of its own): the browser history, and the learner's
// predictions kept in this browser between visits.
//
// History: Streamlit adds a history entry whenever the app changes the URL, so a step, a tab
// or a speed would each take one, and Back would walk through them instead of the lessons.
// Here every change but a lesson's replaces the current entry; a change of lesson adds one.
// A URL naming no lesson (the root) is the first lesson's (data.home), so the first lesson
// change from the root adds an entry too, and Back from there returns to the root's lesson
// instead of leaving the app. A lesson change also closes the sidebar on a phone, where it
// covers the lesson, and brings the page to its top: a lesson picked in the sidebar from far
// down the page would otherwise open where the last one was scrolled to, its title and first
// prediction above view.
//
// First paint: a browser's first page comes without the sidebar's widgets, which Python draws once
// this reports that the page has painted (data.report): its stage, which announces the first run it
// shows (STAGE_SHOWN, stage.js), or, with no stage on the page, itself. A stage that never shows is
// waited for WAIT_MS at most.
//
// Predictions: Python sends the session's checked predictions (data.scores); they are kept
// in localStorage, never on the server. A new session (a reload, a visit the next day) gets
// them back once: this reports what the browser kept (state "saved"), and Python takes it.

const STORE = "continuous-batching-lab/predictions";

let aliases = {};  // a lesson's number -> its name ("1.2" -> "part2-slot-refill"): one lesson either way
let home = null;  // the lesson a URL naming none opens (the course's first)

function lessonOf(href) {
  const params = new URL(href, window.location.href).searchParams;
  const lesson = params.get("lesson") || params.get("scenario") || home;  // ("scenario": an older link's name)
  return lesson ? aliases[lesson] ?? lesson : null;
}

function addHistoryOnlyForLessons() {
  if (window.history.pushState.keepsLessons) return;  // (once per page, however often this runs)
  const push = window.history.pushState.bind(window.history);
  const pushState = (state, title, url) => {
    const from = lessonOf(window.location.href), to = url == null ? from : lessonOf(url);
    if (from === null || to === null || from === to) return window.history.replaceState(state, title, url);
    push(state, title, url);
    document.querySelector("[data-testid='stMain']")?.scrollTo(0, 0);  // (Streamlit's main area scrolls)
    window.scrollTo(0, 0);
    collapseSidebarOnAPhone();
  };
  pushState.keepsLessons = true;
  window.history.pushState = pushState;
}

// On a phone Streamlit draws the sidebar over the page, and it stayed there over the lesson just
// picked in it. Below Streamlit's narrow-screen width, a lesson change closes it as its own button does.
const PHONE_WIDTH = 768;  // px: below it the sidebar covers the page instead of sitting beside it

function collapseSidebarOnAPhone() {
  if (window.innerWidth >= PHONE_WIDTH) return;
  document.querySelector("[data-testid='stSidebarCollapseButton'] button")?.click();
}

function kept() {
  try {
    const value = JSON.parse(window.localStorage.getItem(STORE) || "{}");
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};  // (storage switched off, or not JSON: nothing kept)
  }
}

let session = null;  // the server session this page last reported to
let mayWrite = false;  // whether storage may take that session's scores (only once it has what was kept)

const STAGE_SHOWN = "cblab-stage-shown";  // a window event, and a flag on window once it has fired
const WAIT_MS = 3000;
let painted = null;  // the session whose first paint was reported

function reportPaint(report, setTriggerValue) {
  if (!report || painted === session) return;
  painted = session;
  // (after the frame: the paint is on screen before Python's next run asks the browser for more)
  const send = () => requestAnimationFrame(() => setTimeout(() => setTriggerValue("painted", true), 0));
  if (report !== "stage" || window[STAGE_SHOWN]) return send();
  let sent = false;
  const once = () => {
    if (!sent) send();
    sent = true;
  };
  window.addEventListener(STAGE_SHOWN, once, { once: true });
  setTimeout(once, WAIT_MS);
}

export default function (component) {
  const { data, setStateValue, setTriggerValue } = component;
  aliases = data.aliases || {};
  home = data.home || null;
  addHistoryOnlyForLessons();
  if (data.session !== session) {  // a new session (a reload, or the server restarted): report once
    session = data.session;
    const saved = kept();
    mayWrite = data.restored || !Object.keys(saved).length;
    if (!mayWrite) setStateValue("saved", saved);  // Python merges them and sends data.restored
  }
  reportPaint(data.report, setTriggerValue);
  if (data.restored) mayWrite = true;
  if (!mayWrite) return;
  try {
    window.localStorage.setItem(STORE, JSON.stringify(data.scores || {}));
  } catch {
    // storage full or switched off: the session still has its scores
  }
}
