"""A file upload as Streamlit's frontend sends it: a multipart PUT to the URL the session handed out.

`/_stcore/upload_file/<session id>/<file id>` is an ordinary HTTP request, apart from the
session's websocket, and only the server holding that session accepts it (another answers
400, "Invalid session_id"): behind a proxy it must reach the same worker
(`cblab/cli/nginx_config.py` routes both by the sticky cookie). Streamlit checks its XSRF token:
the `_streamlit_xsrf` cookie, and the same token in an `X-Xsrftoken` header.
"""

from __future__ import annotations

import urllib.error
import urllib.request
import uuid

from streamlit.proto.Common_pb2 import FileURLs
from streamlit.proto.WidgetStates_pb2 import WidgetState


def put_file(opener: urllib.request.OpenerDirector, url: str, name: str, data: bytes, xsrf: str) -> int:
    """PUT `data` as the form's one file `name`; the HTTP status."""
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    body = head.encode() + data + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(url, data=body, method="PUT")
    request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    request.add_header("X-Xsrftoken", xsrf)
    try:
        with opener.open(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def uploader_state(widget: str, name: str, size: int, urls: FileURLs) -> WidgetState:
    """The uploader's state once the file is stored: what the frontend sends on the next rerun."""
    state = WidgetState(id=widget)
    info = state.file_uploader_state_value.uploaded_file_info.add(name=name, size=size, file_id=urls.file_id)
    info.file_urls.CopyFrom(urls)
    return state
