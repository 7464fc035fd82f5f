#!/usr/bin/env bash
# Regenerates the test identity in TestCerts/ and the Swift file that embeds it,
# Sources/FakeAPNs/Identity/TestCertificates.swift.
#
# Usage: Scripts/make-test-certs.sh   (from any directory)
# Needs only the openssl 3.0 CLI and coreutils. Every run makes new keys, so every
# file changes; commit TestCerts/ and the Swift file together.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CERTS="$ROOT/TestCerts"
SWIFT_FILE="$ROOT/Sources/FakeAPNs/Identity/TestCertificates.swift"

DAYS=36500 # 100 years
JWT_KEY_ID="ABC123DEFG"
JWT_TEAM_ID="DEF123GHIJ"
CLIENT_TOPIC="com.example.app"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

mkdir -p "$CERTS" "$(dirname "$SWIFT_FILE")"

# Runs a command quietly; shows its output only if it fails.
quiet() {
    if ! "$@" >"$WORK/log" 2>&1; then
        cat "$WORK/log" >&2
        echo "make-test-certs: failed: $*" >&2
        exit 1
    fi
}

# A random positive 128-bit serial number.
serial() {
    echo "0x$(openssl rand -hex 16)"
}

# new_key OUT: an EC P-256 private key in PKCS#8 PEM ("BEGIN PRIVATE KEY").
new_key() {
    quiet openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"
}

# APNs-style subject of a provider certificate: the topic (bundle ID) sits in UID.
apns_subject() { # BUNDLE CN_PREFIX
    echo "/UID=$1/CN=$2: $1/OU=ABCDE12345/O=Example Ltd/C=US"
}

# --- OpenSSL configuration -------------------------------------------------

# Request settings shared by every `openssl req` call: subjects come from -subj.
cat >"$WORK/req.cnf" <<'EOF'
[req]
distinguished_name = req_dn
string_mask = utf8only
utf8 = yes

[req_dn]

[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF

cat >"$WORK/server.ext" <<'EOF'
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF

# universal_ext BUNDLE: extensions of a universal provider certificate for BUNDLE:
# both environment markers and the topics extension
# SEQUENCE { UTF8String topic, SEQUENCE { UTF8String kind }, ... }.
universal_ext() {
    cat <<EOF
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
# sandbox and production environment markers
1.2.840.113635.100.6.3.1 = ASN1:NULL
1.2.840.113635.100.6.3.2 = ASN1:NULL
# topics
1.2.840.113635.100.6.3.6 = ASN1:SEQUENCE:apns_topics

[apns_topics]
topic1 = UTF8:$1
kind1 = SEQUENCE:apns_kind_app
topic2 = UTF8:$1.voip
kind2 = SEQUENCE:apns_kind_voip
topic3 = UTF8:$1.complication
kind3 = SEQUENCE:apns_kind_complication

[apns_kind_app]
kind = UTF8:app

[apns_kind_voip]
kind = UTF8:voip

[apns_kind_complication]
kind = UTF8:complication
EOF
}

# Old-style "Apple Development IOS Push Services" certificate: sandbox marker only.
cat >"$WORK/sandbox.ext" <<'EOF'
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
1.2.840.113635.100.6.3.1 = ASN1:NULL
EOF

# --- Signing helpers ---------------------------------------------------------

# self_signed_ca KEY OUT SUBJECT
self_signed_ca() {
    quiet openssl req -new -x509 -config "$WORK/req.cnf" -extensions ca_ext \
        -key "$1" -sha256 -days "$DAYS" -set_serial "$(serial)" -subj "$3" -out "$2"
}

# issue_cert CA_CERT CA_KEY KEY OUT SUBJECT EXTFILE SECTION
issue_cert() {
    quiet openssl req -new -config "$WORK/req.cnf" -key "$3" -subj "$5" -out "$WORK/req.csr"
    quiet openssl x509 -req -in "$WORK/req.csr" -CA "$1" -CAkey "$2" -set_serial "$(serial)" \
        -sha256 -days "$DAYS" -extfile "$6" -extensions "$7" -out "$4"
}

# issue_dated CA_CERT CA_KEY KEY OUT SUBJECT EXTFILE START END: `openssl x509` in 3.0 cannot
# set notBefore, so this signs with `openssl ca` and a throw-away CA database.
issue_dated() {
    local db="$WORK/ca-db"
    rm -rf "$db"
    mkdir -p "$db/new"
    : >"$db/index.txt"
    cat >"$db/ca.cnf" <<EOF
[ca]
default_ca = throwaway

[throwaway]
database = $db/index.txt
new_certs_dir = $db/new
rand_serial = yes
default_md = sha256
policy = keep_subject
unique_subject = no
email_in_dn = no
copy_extensions = none

[keep_subject]
userId = optional
commonName = optional
organizationalUnitName = optional
organizationName = optional
countryName = optional
EOF
    quiet openssl req -new -config "$WORK/req.cnf" -key "$3" -subj "$5" -out "$WORK/req.csr"
    quiet openssl ca -batch -notext -preserveDN -config "$db/ca.cnf" \
        -cert "$1" -keyfile "$2" -in "$WORK/req.csr" -out "$4" \
        -extfile "$6" -extensions client_ext -startdate "$7" -enddate "$8"
}

# --- Certificates ------------------------------------------------------------

echo "Generating the test identity in $CERTS"

new_key "$CERTS/ca.key"
self_signed_ca "$CERTS/ca.key" "$CERTS/ca.pem" "/CN=FakeAPNs Test CA/O=FakeAPNs"

new_key "$CERTS/server.key"
issue_cert "$CERTS/ca.pem" "$CERTS/ca.key" "$CERTS/server.key" "$CERTS/server.pem" \
    "/CN=localhost" "$WORK/server.ext" server_ext

# The same key encrypted, for testing identities with a passphrase ("fake-apns").
quiet openssl pkey -in "$CERTS/server.key" -aes256 -passout pass:fake-apns -out "$CERTS/server-encrypted.key"

universal_ext com.example.app >"$WORK/client.ext"
new_key "$CERTS/client.key"
issue_cert "$CERTS/ca.pem" "$CERTS/ca.key" "$CERTS/client.key" "$CERTS/client.pem" \
    "$(apns_subject com.example.app "Apple Push Services")" "$WORK/client.ext" client_ext

new_key "$CERTS/client-sandbox.key"
issue_cert "$CERTS/ca.pem" "$CERTS/ca.key" "$CERTS/client-sandbox.key" "$CERTS/client-sandbox.pem" \
    "$(apns_subject com.example.sandbox "Apple Development IOS Push Services")" \
    "$WORK/sandbox.ext" client_ext

universal_ext com.example.expired >"$WORK/expired.ext"
new_key "$CERTS/client-expired.key"
issue_dated "$CERTS/ca.pem" "$CERTS/ca.key" "$CERTS/client-expired.key" "$CERTS/client-expired.pem" \
    "$(apns_subject com.example.expired "Apple Push Services")" "$WORK/expired.ext" \
    20200101000000Z 20210101000000Z

# A second CA the server does not trust; its key is thrown away.
new_key "$WORK/untrusted-ca.key"
self_signed_ca "$WORK/untrusted-ca.key" "$CERTS/untrusted-ca.pem" \
    "/CN=FakeAPNs Untrusted Test CA/O=FakeAPNs"
universal_ext com.example.untrusted >"$WORK/untrusted.ext"
new_key "$CERTS/client-untrusted.key"
issue_cert "$CERTS/untrusted-ca.pem" "$WORK/untrusted-ca.key" "$CERTS/client-untrusted.key" \
    "$CERTS/client-untrusted.pem" "$(apns_subject com.example.untrusted "Apple Push Services")" \
    "$WORK/untrusted.ext" client_ext

# Token (JWT) authentication key, in the form Apple issues: AuthKey_<key id>.p8.
P8="AuthKey_$JWT_KEY_ID.p8"
P8_PUB="AuthKey_$JWT_KEY_ID.pub.pem"
new_key "$CERTS/$P8"
quiet openssl pkey -in "$CERTS/$P8" -pubout -out "$CERTS/$P8_PUB"

# openssl writes keys as 0600; these keys are public test data and a checkout makes them 0644
# anyway, so match that.
chmod 644 "$CERTS"/*.key "$CERTS/$P8"

# --- Self-check ----------------------------------------------------------------

quiet openssl verify -CAfile "$CERTS/ca.pem" \
    "$CERTS/server.pem" "$CERTS/client.pem" "$CERTS/client-sandbox.pem"
quiet openssl verify -CAfile "$CERTS/untrusted-ca.pem" "$CERTS/client-untrusted.pem"
if openssl verify -CAfile "$CERTS/ca.pem" "$CERTS/client-untrusted.pem" >/dev/null 2>&1; then
    echo "make-test-certs: client-untrusted.pem unexpectedly verifies against ca.pem" >&2
    exit 1
fi
if openssl verify -CAfile "$CERTS/ca.pem" "$CERTS/client-expired.pem" >/dev/null 2>&1; then
    echo "make-test-certs: client-expired.pem unexpectedly verifies" >&2
    exit 1
fi

# --- README ----------------------------------------------------------------------

end_date() { # CERT -> YYYY-MM-DD
    date -u -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%Y-%m-%d
}
UNTIL="$(end_date "$CERTS/ca.pem")"

cat >"$CERTS/README.md" <<EOF
# Test certificates

The test identity of FakeAPNs. **For tests only: every private key here is public.**
The same files are built into the library as \`TestCertificates\`, so a first test needs no
files at all.

Generated by \`Scripts/make-test-certs.sh\`; do not edit by hand. To regenerate (new keys,
new serial numbers, same names and subjects), run from any directory:

\`\`\`sh
Scripts/make-test-certs.sh
\`\`\`

It rewrites every file here and \`Sources/FakeAPNs/Identity/TestCertificates.swift\`; commit
them together.

All keys are EC P-256 in PKCS#8 PEM; all certificates are signed with ECDSA SHA-256.
"100 years" means until $UNTIL.

| File | What it is | Subject / topics | Validity |
|---|---|---|---|
| \`ca.pem\`, \`ca.key\` | Test CA; signs the server certificate and the client certificates meant to be accepted. **Clients that verify the server must trust \`ca.pem\`**; a server that checks client certificates trusts it too | \`CN=FakeAPNs Test CA, O=FakeAPNs\` | 100 years |
| \`server.pem\`, \`server.key\` | Server certificate, signed by the test CA; serverAuth | \`CN=localhost\`; SAN \`DNS:localhost\`, \`IP:127.0.0.1\`, \`IP:::1\` | 100 years |
| \`server-encrypted.key\` | \`server.key\` encrypted with AES-256, passphrase \`fake-apns\` | | |
| \`client.pem\`, \`client.key\` | Universal provider certificate (sandbox and production markers), signed by the test CA; clientAuth | \`UID=com.example.app, CN=Apple Push Services: com.example.app, OU=ABCDE12345, O=Example Ltd, C=US\`; topics \`com.example.app\` (app), \`com.example.app.voip\` (voip), \`com.example.app.complication\` (complication) | 100 years |
| \`client-sandbox.pem\`, \`client-sandbox.key\` | Old-style development (sandbox only) provider certificate, signed by the test CA; no topics extension | \`UID=com.example.sandbox, CN=Apple Development IOS Push Services: com.example.sandbox, OU=ABCDE12345, O=Example Ltd, C=US\` | 100 years |
| \`client-expired.pem\`, \`client-expired.key\` | Universal provider certificate that has expired, signed by the test CA | \`UID=com.example.expired, CN=Apple Push Services: com.example.expired, OU=ABCDE12345, O=Example Ltd, C=US\`; topics \`com.example.expired\` (app), \`.voip\`, \`.complication\` | 2020-01-01 to 2021-01-01 (expired) |
| \`untrusted-ca.pem\` | A second CA that the server does not trust (its key was discarded) | \`CN=FakeAPNs Untrusted Test CA, O=FakeAPNs\` | 100 years |
| \`client-untrusted.pem\`, \`client-untrusted.key\` | Universal provider certificate signed by the untrusted CA | \`UID=com.example.untrusted, CN=Apple Push Services: com.example.untrusted, OU=ABCDE12345, O=Example Ltd, C=US\`; topics \`com.example.untrusted\` (app), \`.voip\`, \`.complication\` | 100 years |
| \`$P8\` | ES256 signing key for token (JWT) authentication, as Apple issues it | key id \`$JWT_KEY_ID\`, team id \`$JWT_TEAM_ID\` | no expiry |
| \`$P8_PUB\` | Public key of \`$P8\` (SubjectPublicKeyInfo PEM), for verifying tokens | | |

JWT token authentication: key id (\`kid\`) **\`$JWT_KEY_ID\`**, team id (\`iss\`) **\`$JWT_TEAM_ID\`**.

Environment markers in the provider certificates: OID \`1.2.840.113635.100.6.3.1\` (sandbox) and
\`1.2.840.113635.100.6.3.2\` (production). The topics extension is OID
\`1.2.840.113635.100.6.3.6\`: a SEQUENCE of pairs, UTF8String topic then SEQUENCE { UTF8String
kind }.
EOF

# --- Swift file -----------------------------------------------------------------

# pem_constant NAME FILE DOC...: one documented PEM constant. The literal ends with an empty
# line, so the string keeps the file's final newline and equals the file byte for byte.
pem_constant() {
    local name="$1" file="$2"
    shift 2
    local content
    content="$(cat "$CERTS/$file")"
    if [[ "$(cat "$CERTS/$file"; echo x)" != "$content"$'\n'x ]] || [[ "$content" == *[\\\"]* ]] ||
        [[ "$content" == *$'\r'* ]]; then
        echo "make-test-certs: $file is not plain PEM ending in one newline" >&2
        exit 1
    fi
    local line
    for line in "$@"; do
        echo "    ///${line:+ $line}"
    done
    echo "    public static let $name: String = \"\"\""
    sed 's/^/        /' <<<"$content"
    echo
    echo "        \"\"\""
    echo
}

{
    cat <<'EOF'
// GENERATED by Scripts/make-test-certs.sh from the files in TestCerts/. Do not edit by hand:
// run the script, which rewrites TestCerts/ and this file together.
//
// Each PEM literal ends with an empty line so that the string keeps the file's final newline
// and equals the file in TestCerts/ byte for byte.

/// The test identity shipped in `TestCerts/`, built in so a first test needs no files.
///
/// Every private key here is public: use this identity for tests only. The certificates are
/// EC P-256, signed with ECDSA SHA-256, and valid for 100 years unless said otherwise.
/// `TestCerts/README.md` lists the same files.
public enum TestCertificates {
EOF
    pem_constant caPEM ca.pem \
        "The test CA certificate (\`TestCerts/ca.pem\`), subject \`CN=FakeAPNs Test CA, O=FakeAPNs\`." \
        "" \
        "It signs \`serverCertificatePEM\` and the client certificates meant to be accepted." \
        "Clients that verify the fake server trust it, and so does a server that checks client" \
        "certificates."
    pem_constant serverCertificatePEM server.pem \
        "The server's TLS certificate (\`TestCerts/server.pem\`), signed by \`caPEM\`." \
        "" \
        "Subject \`CN=localhost\`, subject alternative names \`localhost\`, \`127.0.0.1\` and \`::1\`," \
        "extended key usage serverAuth. Pair it with \`serverKeyPEM\`."
    pem_constant serverKeyPEM server.key \
        "The private key of \`serverCertificatePEM\` (\`TestCerts/server.key\`), PKCS#8 PEM."
    pem_constant clientCertificatePEM client.pem \
        "A universal provider (client) certificate (\`TestCerts/client.pem\`), signed by \`caPEM\`." \
        "" \
        "Subject \`UID=com.example.app, CN=Apple Push Services: com.example.app, OU=ABCDE12345," \
        "O=Example Ltd, C=US\`. It carries both environment markers (sandbox and production) and the" \
        "topics \`com.example.app\` (app), \`com.example.app.voip\` (voip) and" \
        "\`com.example.app.complication\` (complication). Pair it with \`clientKeyPEM\`."
    pem_constant clientKeyPEM client.key \
        "The private key of \`clientCertificatePEM\` (\`TestCerts/client.key\`), PKCS#8 PEM."
    pem_constant sandboxClientCertificatePEM client-sandbox.pem \
        "An old-style development provider certificate (\`TestCerts/client-sandbox.pem\`), signed" \
        "by \`caPEM\`." \
        "" \
        "Subject \`UID=com.example.sandbox, CN=Apple Development IOS Push Services:" \
        "com.example.sandbox, OU=ABCDE12345, O=Example Ltd, C=US\`. It carries only the sandbox" \
        "marker and no topics extension, so it is for the sandbox environment and the topic" \
        "\`com.example.sandbox\` alone. Pair it with \`sandboxClientKeyPEM\`."
    pem_constant sandboxClientKeyPEM client-sandbox.key \
        "The private key of \`sandboxClientCertificatePEM\` (\`TestCerts/client-sandbox.key\`)," \
        "PKCS#8 PEM."
    pem_constant expiredClientCertificatePEM client-expired.pem \
        "An expired universal provider certificate (\`TestCerts/client-expired.pem\`), signed by" \
        "\`caPEM\`, valid only from 2020-01-01 to 2021-01-01." \
        "" \
        "Subject \`UID=com.example.expired, CN=Apple Push Services: com.example.expired," \
        "OU=ABCDE12345, O=Example Ltd, C=US\`, topics \`com.example.expired\` (app)," \
        "\`com.example.expired.voip\` (voip) and \`com.example.expired.complication\`" \
        "(complication). Use it to check that expired certificates are refused. Pair it with" \
        "\`expiredClientKeyPEM\`."
    pem_constant expiredClientKeyPEM client-expired.key \
        "The private key of \`expiredClientCertificatePEM\` (\`TestCerts/client-expired.key\`)," \
        "PKCS#8 PEM."
    pem_constant untrustedCAPEM untrusted-ca.pem \
        "A second CA certificate (\`TestCerts/untrusted-ca.pem\`), subject" \
        "\`CN=FakeAPNs Untrusted Test CA, O=FakeAPNs\`, that the server does not trust." \
        "" \
        "It signed \`untrustedClientCertificatePEM\`; its private key was discarded."
    pem_constant untrustedClientCertificatePEM client-untrusted.pem \
        "A universal provider certificate signed by \`untrustedCAPEM\` rather than \`caPEM\`" \
        "(\`TestCerts/client-untrusted.pem\`)." \
        "" \
        "Subject \`UID=com.example.untrusted, CN=Apple Push Services: com.example.untrusted," \
        "OU=ABCDE12345, O=Example Ltd, C=US\`, topics \`com.example.untrusted\` (app)," \
        "\`com.example.untrusted.voip\` (voip) and \`com.example.untrusted.complication\`" \
        "(complication). Use it to check that certificates from an unknown CA are refused." \
        "Pair it with \`untrustedClientKeyPEM\`."
    pem_constant untrustedClientKeyPEM client-untrusted.key \
        "The private key of \`untrustedClientCertificatePEM\` (\`TestCerts/client-untrusted.key\`)," \
        "PKCS#8 PEM."
    pem_constant jwtSigningKeyPEM "$P8" \
        "The ES256 (P-256) key that signs provider authentication tokens (JWT), as Apple issues" \
        "it: the PKCS#8 PEM of \`TestCerts/$P8\`." \
        "" \
        "Tokens signed with it carry the key id \`jwtKeyID\` and the team id \`jwtTeamID\`."
    pem_constant jwtPublicKeyPEM "$P8_PUB" \
        "The public key of \`jwtSigningKeyPEM\` (\`TestCerts/$P8_PUB\`)," \
        "SubjectPublicKeyInfo PEM, with which the server verifies tokens."
    cat <<EOF
    /// The key id of \`jwtSigningKeyPEM\`: the \`kid\` of a token's header, and the name of the
    /// \`.p8\` file (\`TestCerts/$P8\`).
    public static let jwtKeyID = "$JWT_KEY_ID"

    /// The team id that goes with \`jwtSigningKeyPEM\`: the \`iss\` claim of a token.
    public static let jwtTeamID = "$JWT_TEAM_ID"

    /// The bundle ID \`clientCertificatePEM\` is issued for: its subject UID and its app topic,
    /// the \`apns-topic\` of alert pushes with that certificate.
    public static let clientTopic = "$CLIENT_TOPIC"
}
EOF
} >"$WORK/TestCertificates.swift"
mv "$WORK/TestCertificates.swift" "$SWIFT_FILE"

echo "Wrote $CERTS and $SWIFT_FILE"
