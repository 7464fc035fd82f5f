"""A channel management and broadcast server on python3-h2, independent of FakeAPNs's own
server, answering as Apple's pages describe, for the tests of the clients that speak these APIs.

    /usr/bin/python3 apns_broadcast_server.py --cert server.pem --key server.key --record FILE

Listens on 127.0.0.1 on a free port, printed alone on the first line of standard output, and
serves both APIs on it (their paths never overlap), with one channel store for all connections:

    POST   /1/apps/<bundle>/channels      {"message-storage-policy":0|1,"push-type":…}: 201 and
                                          apns-channel-id; 400 BadRequestParams otherwise
    GET    /1/apps/<bundle>/channels      apns-channel-id: 200 {"message-storage-policy":n,
                                          "push-type":"LiveActivity"}
    DELETE /1/apps/<bundle>/channels      apns-channel-id: 204
    GET    /1/apps/<bundle>/all-channels  200 {"channels":[…]}
    POST   /4/broadcasts/apps/<bundle>    apns-channel-id: 200 and apns-unique-id

A missing apns-channel-id is 400 MissingChannelId, an unknown one 400 ChannelNotRegistered, any
other path 404 BadPath. Every answer carries apns-request-id (the request's, or a new UUID);
refusals have the body {"reason":"…"}. Before answering, each request is appended to --record
as one JSON line: "method", "path", "headers" (name and value pairs, in order, pseudo-headers
left out), "body" (text).
"""

import argparse
import base64
import json
import os
import re
import socket
import ssl
import threading
import uuid

import h2.config
import h2.connection
import h2.events

CHANNELS = re.compile(r"^/1/apps/([^/]+)/channels$")
ALL_CHANNELS = re.compile(r"^/1/apps/([^/]+)/all-channels$")
BROADCAST = re.compile(r"^/4/broadcasts/apps/([^/]+)$")


class Store:
    """The channels of every bundle, and the record file, shared by all connections."""

    def __init__(self, record):
        self.lock = threading.Lock()
        self.channels = {}  # id -> (bundle, policy)
        self.record = record

    def log(self, method, path, headers, body):
        line = json.dumps({"method": method, "path": path, "headers": headers,
                           "body": body.decode("utf-8", "replace")})
        with self.lock, open(self.record, "a") as file:
            file.write(line + "\n")

    def answer(self, method, path, headers, body):
        """(status, extra headers, body) for one request."""
        values = dict(headers)
        channel = values.get("apns-channel-id")
        with self.lock:
            match = CHANNELS.match(path)
            if match and method == "POST":
                try:
                    settings = json.loads(body)
                    policy = int(settings["message-storage-policy"])
                    push_type = settings["push-type"]
                except (ValueError, KeyError, TypeError):
                    return refusal(400, "BadRequestParams")
                if policy not in (0, 1) or push_type.lower() != "liveactivity" or len(settings) != 2:
                    return refusal(400, "BadRequestParams")
                identifier = base64.b64encode(os.urandom(16)).decode()
                self.channels[identifier] = (match.group(1), policy)
                return 201, [("apns-channel-id", identifier)], b""
            if match and method in ("GET", "DELETE"):
                known = self.known(channel, match.group(1))
                if known is not None:
                    return known
                if method == "DELETE":
                    del self.channels[channel]
                    return 204, [], b""
                policy = self.channels[channel][1]
                return ok({"message-storage-policy": policy, "push-type": "LiveActivity"})
            match = ALL_CHANNELS.match(path)
            if match and method == "GET":
                bundle = match.group(1)
                return ok({"channels": [key for key, (owner, _) in self.channels.items() if owner == bundle]})
            match = BROADCAST.match(path)
            if match and method == "POST":
                known = self.known(channel, match.group(1))
                if known is not None:
                    return known
                return 200, [("apns-unique-id", str(uuid.uuid4()))], b""
        return refusal(404, "BadPath")

    def known(self, channel, bundle):
        """A refusal when the channel is missing or not the bundle's; None when it is."""
        if not channel:
            return refusal(400, "MissingChannelId")
        if self.channels.get(channel, (None,))[0] != bundle:
            return refusal(400, "ChannelNotRegistered")
        return None


def ok(value):
    return 200, [("content-type", "application/json")], json.dumps(value, separators=(",", ":")).encode()


def refusal(status, reason):
    return status, [("content-type", "application/json")], json.dumps({"reason": reason}).encode()


def serve(sock, store):
    configuration = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    connection = h2.connection.H2Connection(configuration)
    connection.initiate_connection()
    sock.sendall(connection.data_to_send())
    requests = {}
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    requests[event.stream_id] = (event.headers, b"")
                elif isinstance(event, h2.events.DataReceived):
                    headers, body = requests[event.stream_id]
                    requests[event.stream_id] = (headers, body + event.data)
                    connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    headers, body = requests.pop(event.stream_id)
                    respond(connection, event.stream_id, headers, body, store)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    sock.sendall(connection.data_to_send())
                    return
            sock.sendall(connection.data_to_send())
    except (OSError, ssl.SSLError):
        return
    finally:
        sock.close()


def respond(connection, stream, headers, body, store):
    pseudo = {name: value for name, value in headers if name.startswith(":")}
    regular = [[name, value] for name, value in headers if not name.startswith(":")]
    method, path = pseudo.get(":method", ""), pseudo.get(":path", "")
    store.log(method, path, regular, body)
    status, extra, answer = store.answer(method, path, regular, body)
    request_id = dict(regular).get("apns-request-id") or str(uuid.uuid4())
    response = [(":status", str(status)), ("apns-request-id", request_id)] + extra
    connection.send_headers(stream, response, end_stream=not answer)
    if answer:
        connection.send_data(stream, answer, end_stream=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--record", required=True)
    options = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options.cert, options.key)
    context.set_alpn_protocols(["h2"])
    store = Store(options.record)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    while True:
        raw, _ = listener.accept()
        try:
            raw.settimeout(10)
            sock = context.wrap_socket(raw, server_side=True)
            sock.settimeout(None)
        except (OSError, ssl.SSLError):
            raw.close()
            continue
        threading.Thread(target=serve, args=(sock, store), daemon=True).start()


if __name__ == "__main__":
    main()
