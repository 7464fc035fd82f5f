"""Sends pushes to an APNs provider API one after another on one HTTP/2 connection, with
python3-h2: a client that shares no code with FakeAPNs, for the tests that play what a phone
does with what it was sent.

    /usr/bin/python3 apns_push.py --port PORT --ca CA.pem REQUESTS

REQUESTS is a JSON array; each request is {"path": "/3/device/<token>", "headers": [[name,
value], ...], "body": "<JSON text>"}. Each is sent once the one before it is answered, so the
server accepts them in the order given. Prints one JSON array, one answer per request:
{"status": 200, "reason": null, "apns_id": ..., "apns_unique_id": ...} (a header the answer
did not carry is null).
"""

import argparse
import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("requests")
    options = parser.parse_args()

    context = ssl.create_default_context(cafile=options.ca)
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection((options.host, options.port), timeout=options.timeout)
    sock = context.wrap_socket(raw, server_hostname=options.host)
    if sock.selected_alpn_protocol() != "h2":
        raise SystemExit("ALPN chose %r" % sock.selected_alpn_protocol())
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    connection.initiate_connection()
    sock.sendall(connection.data_to_send())
    authority = "%s:%d" % (options.host, options.port)

    answers = []
    for request in json.loads(options.requests):
        stream = connection.get_next_available_stream_id()
        headers = [(":method", "POST"), (":scheme", "https"), (":authority", authority),
                   (":path", request["path"])] + [(name, value) for name, value in request["headers"]]
        connection.send_headers(stream, headers)
        connection.send_data(stream, request["body"].encode(), end_stream=True)
        sock.sendall(connection.data_to_send())
        answer = {"status": None, "reason": None, "apns_id": None, "apns_unique_id": None}
        body = b""
        done = False
        while not done:
            chunk = sock.recv(65536)
            if not chunk:
                raise SystemExit("the server closed the connection before answering stream %d" % stream)
            for event in connection.receive_data(chunk):
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                    fields = dict(event.headers)
                    answer["status"] = int(fields[":status"])
                    answer["apns_id"] = fields.get("apns-id")
                    answer["apns_unique_id"] = fields.get("apns-unique-id")
                elif isinstance(event, h2.events.DataReceived):
                    if event.stream_id == stream:
                        body += event.data
                    connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                    done = True
                elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                    raise SystemExit("the server reset stream %d" % stream)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    raise SystemExit("the server sent GOAWAY before answering stream %d" % stream)
            pending = connection.data_to_send()
            if pending:
                sock.sendall(pending)
        if body:
            answer["reason"] = json.loads(body.decode()).get("reason")
        answers.append(answer)
    sock.close()
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
