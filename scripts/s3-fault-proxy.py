#!/usr/bin/env python3
"""scripts/s3-fault-proxy.py -- an HTTP proxy between forst and an S3 server
that injects faults by rules, for the s3 step's fault tests.

  s3-fault-proxy.py LISTEN_PORT UPSTREAM_PORT RULES_FILE LOG_FILE

Forwards each request from 127.0.0.1:LISTEN_PORT to 127.0.0.1:UPSTREAM_PORT
unchanged except for "Connection: close" (not signed by SigV4), so every
request travels on a connection of its own.  Before each request it reads
RULES_FILE, a JSON list of rules; the first rule whose "method" and "path"
(regular expressions, matched at the start of the method and of the
request target) match, and whose "times" (default: unlimited) is not used
up, decides what happens:

  error     reply "status" (503) with S3 error "code" (SlowDown) without
            forwarding
  reset     close the connection with a reset, without forwarding
  truncate  forward; send the reply's head and half its body, then reset
  lost      forward (the server applies the request), then reset instead
            of replying: a reply lost after the write
  cut       forward half of the request body, then reset both connections
            (an upload that dies half-way)
  stall     hold the connection without forwarding, until the rules change
  delay     wait "ms" (20) milliseconds, then forward as usual: a store's
            first-byte latency (not logged)

Use counts are kept per rule index while RULES_FILE is unchanged.  Every
injected fault appends "ACTION METHOD TARGET" to LOG_FILE.  Prints
"listening" once ready; runs until killed.
"""
import json
import os
import re
import socket
import struct
import sys
import threading
import time

lock = threading.Lock()
state = {"mtime": None, "rules": [], "used": []}


def rules(path):
    """The rules, re-read when the file changed (use counts reset)."""
    try:
        st = os.stat(path)
        key = (st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    with lock:
        if key != state["mtime"]:
            try:
                with open(path) as f:
                    state["rules"] = json.load(f) if key else []
            except (OSError, ValueError):
                state["rules"] = []
            state["used"] = [0] * len(state["rules"])
            state["mtime"] = key
        return state


def pick(path, method, target):
    st = rules(path)
    with lock:
        for i, r in enumerate(st["rules"]):
            if not re.match(r.get("method", ".*"), method):
                continue
            if not re.match(r.get("path", ".*"), target):
                continue
            if "times" in r and st["used"][i] >= r["times"]:
                continue
            st["used"][i] += 1
            return r
    return None


def log(path, line):
    with lock:
        with open(path, "a") as f:
            f.write(line + "\n")


def reset(sock):
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


def read_head(sock, buf):
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            return None, buf
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def header(head, name):
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == name:
            return v.strip()
    return None


def read_body(sock, rest, length):
    while len(rest) < length:
        data = sock.recv(65536)
        if not data:
            break
        rest += data
    return rest[:length], rest[length:]


def read_all(sock):
    out = b""
    while True:
        try:
            data = sock.recv(65536)
        except OSError:
            break
        if not data:
            break
        out += data
    return out


def handle(client, upstream_port, rules_file, log_file):
    buf = b""
    try:
        head, buf = read_head(client, buf)
        if head is None:
            client.close()
            return
        method, target = head.split(b" ")[0].decode(), head.split(b" ")[1].decode()
        length = int(header(head, b"content-length") or 0)
        rule = pick(rules_file, method, target)
        action = rule["action"] if rule else "pass"
        if action == "delay":
            time.sleep(float(rule.get("ms", 20)) / 1000.0)
            action = "pass"
        if action != "pass":
            log(log_file, "%s %s %s" % (action, method, target))
        if action == "stall":
            version = rules(rules_file)["mtime"]
            while rules(rules_file)["mtime"] == version:
                time.sleep(0.05)
            client.close()
            return
        if action == "reset":
            reset(client)
            return
        body, buf = read_body(client, buf, length)
        if action == "error":
            status = int(rule.get("status", 503))
            code = rule.get("code", "SlowDown")
            xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code>"
                   "<Message>injected by s3-fault-proxy</Message></Error>" % code).encode()
            client.sendall(b"HTTP/1.1 %d Injected\r\nContent-Type: application/xml\r\n"
                           b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (status, len(xml)) + xml)
            client.close()
            return
        lines = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
        out_head = b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n"
        up = socket.create_connection(("127.0.0.1", upstream_port))
        if action == "cut":
            up.sendall(out_head + body[: len(body) // 2])
            time.sleep(0.2)
            reset(up)
            reset(client)
            return
        up.sendall(out_head + body)
        reply = read_all(up)
        up.close()
        if action == "lost":
            reset(client)
            return
        if action == "truncate":
            rhead, _, rbody = reply.partition(b"\r\n\r\n")
            client.sendall(rhead + b"\r\n\r\n" + rbody[: len(rbody) // 2])
            reset(client)
            return
        client.sendall(reply)
        client.close()
    except OSError:
        reset(client)


def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        sys.exit(2)
    listen_port, upstream_port = int(sys.argv[1]), int(sys.argv[2])
    rules_file, log_file = sys.argv[3], sys.argv[4]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", listen_port))
    srv.listen(64)
    print("listening", flush=True)
    while True:
        client, _ = srv.accept()
        threading.Thread(target=handle, args=(client, upstream_port, rules_file, log_file),
                         daemon=True).start()


if __name__ == "__main__":
    main()
