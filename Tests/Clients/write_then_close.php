<?php
// The classic PHP sender of the binary era: stream_socket_client('ssl://…'), one fwrite per
// device, fclose. Run CONNECTIONS times, each with 2 to 5 devices; notification k of the run
// (from 1) goes to a token whose last four bytes are k. Prints the number sent.
// usage: php write_then_close.php HOST PORT CA_FILE CONNECTIONS SEED
[, $host, $port, $caFile, $connections, $seed] = $argv;
mt_srand((int)$seed);
$context = stream_context_create(['ssl' => [
    'cafile' => $caFile,
    'peer_name' => 'localhost',
    'verify_peer' => true,
]]);
$sent = 0;
for ($c = 0; $c < (int)$connections; $c++) {
    $fp = stream_socket_client("ssl://$host:$port", $errno, $errstr, 10, STREAM_CLIENT_CONNECT, $context);
    if (!$fp) {
        fwrite(STDERR, "connect failed: $errstr ($errno)\n");
        exit(1);
    }
    $devices = mt_rand(2, 5);
    for ($d = 0; $d < $devices; $d++) {
        $sent++;
        $token = str_repeat("\0", 28) . pack('N', $sent);
        $payload = json_encode(['aps' => ['alert' => 'write then close'], 'n' => $sent]);
        $message = chr(0) . pack('n', strlen($token)) . $token . pack('n', strlen($payload)) . $payload;
        fwrite($fp, $message, strlen($message));
    }
    fclose($fp);
}
echo $sent, "\n";
