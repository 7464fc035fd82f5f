"""An HTTP/2 provider client built on python3-h2, independent of FakeAPNs's own nghttp2 code,
for the tests of GOAWAY and of what a server keeps around it.

Like many HTTP/2 stacks it stops reading at GOAWAY: frames after it are never seen. Requests the
server did not process (above GOAWAY's last stream id, or reset with REFUSED_STREAM) may be
sent again on a new connection with --retry.

    /usr/bin/python3 h2_client.py --port PORT [--ca CA.pem] MODE [options]

Without --ca it verifies the server with the system's CAs (ssl.create_default_context()).

Modes:
    pipeline      sends --count requests at once, reads until every one is answered, GOAWAY or
                  the end of the connection
    rapid-reset   sends a request, --resets pairs of HEADERS + RST_STREAM (CANCEL), then --count
                  requests, at once; reads as pipeline
    keep-sending  keeps --window requests outstanding, sending one more whenever one is
                  answered, until GOAWAY, the end of the connection or --seconds
    over-limit    reads the server's SETTINGS and acknowledges them, then breaks the stream limit
                  they announce: request 0's headers (its body held back), --count requests at
                  once, then request 0's body; reads as pipeline

--incomplete N first sends the headers of N requests whose bodies never come.

Request n (from 0) carries apns-id 00000000-0000-4000-8000-<n as 12 digits>, so the test
matches the queue to the requests. Prints one JSON object: "requests" (index, stream, status,
reason, reset, and "retry" with the second connection's answer), "goaway" (last_stream_id,
error_code, debug as text; null when none came), "frames" ("TYPE stream" of every frame read,
GOAWAY included), "ended" (the server closed the connection).
"""

import argparse
import json
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings

FRAME_NAMES = {0: "DATA", 1: "HEADERS", 2: "PRIORITY", 3: "RST_STREAM", 4: "SETTINGS", 5: "PUSH_PROMISE",
               6: "PING", 7: "GOAWAY", 8: "WINDOW_UPDATE", 9: "CONTINUATION"}
REFUSED_STREAM = 7
CANCEL = 8


def apns_id(index):
    return "00000000-0000-4000-8000-%012d" % index


class Connection:
    """One TLS connection with ALPN h2 and an h2 client state machine over it."""

    def __init__(self, options):
        context = ssl.create_default_context(cafile=options.ca)
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection((options.host, options.port), timeout=options.timeout)
        self.sock = context.wrap_socket(raw, server_hostname=options.host)
        if self.sock.selected_alpn_protocol() != "h2":
            raise SystemExit("ALPN chose %r" % self.sock.selected_alpn_protocol())
        configuration = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(configuration)
        self.h2.initiate_connection()
        self.options = options
        self.pending = b""
        self.goaway = None
        self.ended = False
        self.frames = []
        self.answers = {}
        self.completed = 0

    def headers(self):
        authority = "%s:%d" % (self.options.host, self.options.port)
        return [(":method", "POST"), (":scheme", "https"), (":authority", authority),
                (":path", "/3/device/" + self.options.token)]

    def request(self, index, complete=True):
        """Sends request `index`; without `complete`, its headers only: the body never comes."""
        stream = self.h2.get_next_available_stream_id()
        headers = self.headers() + [("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
                                    ("apns-id", apns_id(index))]
        self.h2.send_headers(stream, headers)
        if complete:
            body = json.dumps({"aps": {"alert": "Message %d" % index}, "n": index}).encode()
            self.h2.send_data(stream, body, end_stream=True)
        self.answers[stream] = {"index": index, "stream": stream, "status": None, "reason": None, "reset": None,
                                "apns_id": None, "apns_unique_id": None, "body": b"", "done": False}
        return stream

    def finish(self, stream, index):
        body = json.dumps({"aps": {"alert": "Message %d" % index}, "n": index}).encode()
        self.h2.send_data(stream, body, end_stream=True)

    def ignore_stream_limit(self):
        """Makes python3-h2 open streams past the limit the server announced."""
        settings = self.h2.remote_settings
        settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = 1000
        settings.acknowledge()

    def reset_pair(self):
        stream = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream, self.headers(), end_stream=False)
        self.h2.reset_stream(stream, error_code=CANCEL)

    def send(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def outstanding(self):
        return len(self.answers) - self.completed

    def read(self, until):
        """Reads and handles frames one at a time until `until()` holds, GOAWAY or the end."""
        while not until() and self.goaway is None and not self.ended:
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, ssl.SSLError, socket.timeout, OSError):
                chunk = b""
            if not chunk:
                self.ended = True
                return
            self.pending += chunk
            while len(self.pending) >= 9 and self.goaway is None:
                length = int.from_bytes(self.pending[0:3], "big")
                if len(self.pending) < 9 + length:
                    break
                frame, self.pending = self.pending[:9 + length], self.pending[9 + length:]
                stream = int.from_bytes(frame[5:9], "big") & 0x7FFFFFFF
                self.frames.append("%s %d" % (FRAME_NAMES.get(frame[3], str(frame[3])), stream))
                for event in self.h2.receive_data(frame):
                    self.handle(event)
            if self.goaway is None:
                self.send()

    def handle(self, event):
        if isinstance(event, h2.events.ResponseReceived):
            answer = self.answers.get(event.stream_id)
            if answer is not None:
                headers = dict(event.headers)
                answer["status"] = int(headers[":status"])
                answer["apns_id"] = headers.get("apns-id")
                answer["apns_unique_id"] = headers.get("apns-unique-id")
        elif isinstance(event, h2.events.DataReceived):
            answer = self.answers.get(event.stream_id)
            if answer is not None:
                answer["body"] += event.data
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            answer = self.answers.get(event.stream_id)
            if answer is not None:
                answer["done"] = True
                self.completed += 1
                if answer["body"]:
                    answer["reason"] = json.loads(answer["body"].decode()).get("reason")
        elif isinstance(event, h2.events.StreamReset):
            answer = self.answers.get(event.stream_id)
            if answer is not None:
                answer["done"] = True
                self.completed += 1
                answer["reset"] = event.error_code
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = {"last_stream_id": event.last_stream_id, "error_code": int(event.error_code),
                           "debug": (event.additional_data or b"").decode("utf-8", "replace")}

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def unprocessed(connection, answer):
    """Whether the server said it did not process the request: safe to send again."""
    if answer["status"] is not None:
        return False
    if answer["reset"] == REFUSED_STREAM:
        return True
    return connection.goaway is not None and answer["stream"] > connection.goaway["last_stream_id"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["pipeline", "rapid-reset", "keep-sending", "over-limit"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", default=None)
    parser.add_argument("--token", default="fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--resets", type=int, default=0)
    parser.add_argument("--incomplete", type=int, default=0)
    parser.add_argument("--window", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--retry", action="store_true")
    options = parser.parse_args()

    connection = Connection(options)
    for index in range(options.incomplete):
        connection.request(index, complete=False)
    sent = options.incomplete
    if options.mode == "keep-sending":
        deadline = time.monotonic() + options.seconds
        while connection.outstanding() < options.incomplete + options.window:
            connection.request(sent)
            sent += 1
        connection.send()
        while connection.goaway is None and not connection.ended and time.monotonic() < deadline:
            completed = connection.completed
            connection.read(lambda: connection.completed > completed)
            if connection.goaway is None and not connection.ended:
                while connection.outstanding() < options.incomplete + options.window:
                    connection.request(sent)
                    sent += 1
                connection.send()
    elif options.mode == "over-limit":
        connection.send()
        connection.read(lambda: any(frame.startswith("SETTINGS") for frame in connection.frames))
        connection.send()
        connection.ignore_stream_limit()
        first = connection.request(sent, complete=False)
        for index in range(sent + 1, sent + 1 + options.count):
            connection.request(index)
        connection.finish(first, sent)
        connection.send()
        connection.read(lambda: connection.outstanding() <= options.incomplete)
    else:
        if options.mode == "rapid-reset":
            connection.request(sent)
            sent += 1
            for _ in range(options.resets):
                connection.reset_pair()
        for index in range(sent, sent + options.count):
            connection.request(index)
        connection.send()
        connection.read(lambda: connection.outstanding() <= options.incomplete)
    connection.close()

    retry = [a for a in connection.answers.values() if unprocessed(connection, a)]
    if options.retry and retry:
        second = Connection(options)
        streams = {second.request(a["index"]): a for a in retry}
        second.send()
        second.read(lambda: second.outstanding() == 0)
        second.close()
        for stream, answer in streams.items():
            again = second.answers[stream]
            answer["retry"] = {"status": again["status"], "reason": again["reason"], "reset": again["reset"]}

    requests = sorted(connection.answers.values(), key=lambda a: a["index"])
    for answer in requests:
        del answer["body"], answer["done"]
    json.dump({"requests": requests, "goaway": connection.goaway, "frames": connection.frames,
               "ended": connection.ended}, sys.stdout)


if __name__ == "__main__":
    main()
