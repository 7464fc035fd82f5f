"""A binary-gateway client that writes its notifications and closes at once: no close_notify
(no `unwrap()`), nothing read, as many provider scripts do.

usage: write_then_close.py HOST PORT CA_FILE CONNECTIONS TLS_VERSION SEED

TLS_VERSION is 1.0, 1.1, 1.2 or 1.3. Each connection sends 2 to 5 notifications, in commands
0, 1 and 2 at random; notification k of the run (from 1) goes to a token whose last four
bytes are k, so the receiver can tell each apart. Prints the number of notifications sent.
"""
import random
import socket
import ssl
import struct
import sys

host, port, ca_file, connections, version, seed = sys.argv[1:7]
port, connections = int(port), int(connections)
versions = {
    "1.0": ssl.TLSVersion.TLSv1,
    "1.1": ssl.TLSVersion.TLSv1_1,
    "1.2": ssl.TLSVersion.TLSv1_2,
    "1.3": ssl.TLSVersion.TLSv1_3,
}
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.load_verify_locations(ca_file)
if version in ("1.0", "1.1"):
    context.set_ciphers("DEFAULT:@SECLEVEL=0")
context.minimum_version = versions[version]
context.maximum_version = versions[version]
rng = random.Random(int(seed))


def frame(command, number):
    token = bytes(28) + struct.pack("!I", number)
    payload = b'{"aps":{"alert":"write then close"},"n":%d}' % number
    if command == 0:
        return struct.pack("!BH", 0, len(token)) + token + struct.pack("!H", len(payload)) + payload
    if command == 1:
        return (struct.pack("!BIIH", 1, number, 0, len(token)) + token
                + struct.pack("!H", len(payload)) + payload)
    items = (struct.pack("!BH", 1, len(token)) + token
             + struct.pack("!BH", 2, len(payload)) + payload
             + struct.pack("!BHI", 3, 4, number))
    return struct.pack("!BI", 2, len(items)) + items


sent = 0
for _ in range(connections):
    raw = socket.create_connection((host, port))
    tls = context.wrap_socket(raw, server_hostname="localhost")
    data = b""
    for _ in range(rng.randint(2, 5)):
        sent += 1
        data += frame(rng.randint(0, 2), sent)
    tls.sendall(data)
    tls.close()
print(sent)
