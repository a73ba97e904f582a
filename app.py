"""Continuous Batching Lab: watch continuous batching happen, one step at a time.

    streamlit run app.py        (in a checkout; installed, `cb-lab app` runs this same file)

Streamlit runs this file in two ways. For every learner's page and every click it runs it as the
script (`__main__`), which draws the page (`cblab/app.py`). When the server starts, it imports it
and finds an `st.App`, Streamlit's app with a start-up hook (its lifespan): the hook imports the
page's modules and reads the course before the server answers (`cblab/cli/worker_start.py`'s
`warmed`), so a class landing at once on a just-started server waits for none of it. Streamlit's
settings for the app are in `.streamlit/config.toml`, beside this file.
"""

import streamlit as st

if __name__ == "__main__":
    from cblab.app import render

    render()
else:
    from cblab.cli.worker_start import warmed

    app = st.App(__file__, lifespan=warmed)
