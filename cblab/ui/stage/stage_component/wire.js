// The stage's data as Python sends it (cblab/ui/runs/stage_wire.py): bytes holding a small JSON header, then
// each new run's frames, compressed (zlib), which the browser inflates itself: nothing is fetched.

const HEADER_BYTES = 4;  // the header's length, big-endian

export function readStageData(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = view.getUint32(0);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(HEADER_BYTES, HEADER_BYTES + size)));
  const runs = [];
  let offset = HEADER_BYTES + size;
  for (const length of header.runs || []) {
    runs.push(bytes.subarray(offset, offset + length));
    offset += length;
  }
  return { header, runs };
}

// One run's frames, as engine/analysis/frames.py's `for_the_wire` gave them (each sentence once).
export async function inflateFrames(compressed) {
  const stream = new Blob([compressed]).stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(stream).text());
}
