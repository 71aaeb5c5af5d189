#!/usr/bin/env python3
# scripts/s3-stall-proxy.py -- a TCP proxy between forst and an S3 server
# that can stall or reset connections, for the s3 step's tests of
# cancellation and statement_timeout during a stuck request.
#
#   s3-stall-proxy.py LISTEN_PORT UPSTREAM_PORT MODE_FILE
#
# Listens on 127.0.0.1:LISTEN_PORT and forwards every connection to
# 127.0.0.1:UPSTREAM_PORT byte for byte (SigV4 signatures stay valid: the
# Host header is not touched).  MODE_FILE (read for every new connection
# and every forwarded chunk) holds one word:
#   pass     forward (also when the file is missing or empty)
#   stall    hold new connections open without forwarding anything, and
#            stop forwarding on open ones: requests hang until the client
#            gives up
#   reset    close new connections at once (connection reset)
# Prints "listening" once ready.  Runs until killed.
import os
import socket
import sys
import threading
import time


def mode(path):
    try:
        with open(path) as f:
            return f.read().strip() or "pass"
    except OSError:
        return "pass"


def pump(src, dst, mode_file):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            while mode(mode_file) == "stall":
                time.sleep(0.05)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def handle(client, upstream_port, mode_file):
    m = mode(mode_file)
    if m == "reset":
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        client.close()
        return
    while m == "stall":
        # hold the connection: the client waits for a reply that never comes
        time.sleep(0.05)
        m = mode(mode_file)
    try:
        up = socket.create_connection(("127.0.0.1", upstream_port))
    except OSError:
        client.close()
        return
    threading.Thread(target=pump, args=(client, up, mode_file), daemon=True).start()
    threading.Thread(target=pump, args=(up, client, mode_file), daemon=True).start()


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__ or "usage: s3-stall-proxy.py LISTEN_PORT UPSTREAM_PORT MODE_FILE\n")
        sys.exit(2)
    listen_port, upstream_port, mode_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", listen_port))
    srv.listen(64)
    print("listening", flush=True)
    while True:
        client, _ = srv.accept()
        threading.Thread(target=handle, args=(client, upstream_port, mode_file),
                         daemon=True).start()


if __name__ == "__main__":
    os.umask(0o022)
    main()
