#!/usr/bin/env python3
"""An HTTP relay in front of ClickHouse that holds the Nth INSERT.

t_clickhouse.sh kills a loader in the middle of its load by a condition,
not a sleep: this relay passes every request to the server (HTTP/1.0, one
request a connection, as tracebuf sends them) until the Nth INSERT, whose
rows it reads and never passes on; it then writes the file HELD and waits.
The test kills the loader when HELD exists: rows of earlier tables are in
the staging tables by then, none swapped in.

usage: ch_hold_proxy.py LISTEN_PORT_FILE UPSTREAM_PORT N HELD
(the port it listens on is written to LISTEN_PORT_FILE).
"""
import socket
import sys


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def main():
    port_file, upstream, nth, held = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    with open(port_file, "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    inserts = 0
    held_conns = []
    while True:
        conn, _ = srv.accept()
        req = read_request(conn)
        if b"?QUERY=INSERT" in req.split(b"\r\n", 1)[0].upper():
            inserts += 1
            if inserts == nth:
                with open(held, "w") as f:
                    f.write("held\n")
                held_conns.append(conn)  # open, unanswered, until the test kills the loader
                continue
        up = socket.create_connection(("127.0.0.1", upstream))
        up.sendall(req)
        while True:
            chunk = up.recv(65536)
            if not chunk:
                break
            conn.sendall(chunk)
        up.close()
        conn.close()


if __name__ == "__main__":
    main()
