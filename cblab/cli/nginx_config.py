"""The nginx configuration `cb-lab serve` writes: N Streamlit workers behind one port, sticky by cookie.

A learner's page is one Streamlit session, held in one worker's memory: its websocket
(`/_stcore/stream`), its file uploads (`/_stcore/upload_file/<session>/<file>`, separate
HTTP requests that only that worker accepts) and its media must all reach that worker. So
the proxy routes by a cookie, never by client address (a class behind one NAT, or every
test client on 127.0.0.1, would all land on one worker):

- a request without a known `cbl_worker` cookie goes to the workers in turn (round robin),
  and its response sets `cbl_worker=w<i>`, naming the worker that served it: the page's
  first request, so the page's websocket, uploads and media follow it (HAProxy's "cookie
  insert", in nginx: a `map` of the cookie to one upstream per worker);
- a request with the cookie goes to that worker; if it is down, to another (`backup`), where
  the page starts a new session. An unknown cookie value is treated as none: the proxy only
  ever forwards to its own workers.

Each response names its worker in an `X-CBL-Worker` header (w0, w1, ...). The websocket's
upgrade headers are passed on; uploads are streamed (not buffered to disk) and allowed up to
6 MB, above Streamlit's own 5 MB limit (`.streamlit/config.toml`), so Streamlit gives the
refusal. nginx runs in the foreground (`daemon off`) with its pid file, logs and temporary
folders in the run folder, not the system's configuration.
"""

from __future__ import annotations

from pathlib import Path

COOKIE = "cbl_worker"
TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def nginx_config(run_dir: Path, address: str, port: int, worker_ports: list[int]) -> str:
    """The configuration text: listen on `address`:`port`, workers on 127.0.0.1:`worker_ports`."""
    names = [f"w{i}" for i in range(len(worker_ports))]
    servers = [f"127.0.0.1:{p}" for p in worker_ports]
    upstreams = [f"    upstream cbl_any {{\n{_servers(servers)}    }}"]
    for i, name in enumerate(names):
        others = [f"{s} backup" for s in servers if s != servers[i]]
        upstreams.append(f"    upstream cbl_{name} {{\n{_servers([servers[i], *others])}    }}")
    by_cookie = "".join(f"        {name} cbl_{name};\n" for name in names)
    by_address = "".join(f"        {server} {name};\n" for server, name in zip(servers, names))
    temp = "".join(f"    {kind}_temp_path {run_dir / kind};\n" for kind in TEMP_PATHS)
    upstream_text = "\n".join(upstreams)
    return f"""# Written by `cb-lab serve` for this run only (see cblab/cli/nginx_config.py); not the system's nginx.
daemon off;
worker_processes 1;
pid {run_dir / "nginx.pid"};
error_log {run_dir / "error.log"} warn;

events {{
    worker_connections 1024;
}}

http {{
    log_format cbl '$remote_addr [$time_local] "$request" $status $body_bytes_sent $request_time '
                   'worker=$cbl_served_by cookie=$cookie_{COOKIE} upstream=$upstream_addr "$http_user_agent"';
    access_log {run_dir / "access.log"} cbl;
{temp}    client_max_body_size 6m;

{upstream_text}

    map $http_upgrade $connection_upgrade {{
        default upgrade;
        "" close;
    }}
    map $cookie_{COOKIE} $cbl_upstream {{
        default cbl_any;
{by_cookie}    }}
    map $upstream_addr $cbl_served_by {{
        default "";
{by_address}    }}
    map $cbl_served_by $cbl_cookie {{
        "" "";
        default "{COOKIE}=$cbl_served_by; Path=/; HttpOnly; SameSite=Lax";
    }}
    map $cbl_upstream $cbl_set_cookie {{
        default "";
        cbl_any $cbl_cookie;
    }}

    server {{
        listen {address}:{port};
        location / {{
            proxy_pass http://$cbl_upstream;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_read_timeout 1d;
            proxy_send_timeout 1d;
            proxy_buffering off;
            proxy_request_buffering off;
            add_header Set-Cookie $cbl_set_cookie;
            add_header X-CBL-Worker $cbl_served_by;
        }}
    }}
}}
"""


def _servers(servers: list[str]) -> str:
    return "".join(f"        server {server};\n" for server in servers)
