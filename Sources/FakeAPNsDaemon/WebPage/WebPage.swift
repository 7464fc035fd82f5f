/// The web page the control API serves at `/`: a live list of what arrived and what was
/// refused, with the device registry and the fault rules, drawn by a script that reads the
/// same control API a test script uses. Every byte is in the binary (no CDN, no files read at
/// run time), and the page runs under a strict Content-Security-Policy: no inline script or
/// style, no other origin, so a payload that slips past the script's text-only rendering
/// still cannot run.
enum WebPage {
    /// One file of the page.
    struct Asset: Sendable {
        let contentType: String
        let body: String

        var response: HTTPResponse {
            HTTPResponse(
                status: 200, contentType: contentType, body: Array(body.utf8),
                headers: [
                    ("Content-Security-Policy", WebPage.contentSecurityPolicy),
                    ("X-Content-Type-Options", "nosniff"),
                    ("Referrer-Policy", "no-referrer"),
                    ("X-Frame-Options", "DENY"),
                ])
        }
    }

    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The file at `/` (name "") or `/web/<name>`; nil when there is none.
    static func asset(named name: String) -> Asset? {
        switch name {
        case "": Asset(contentType: "text/html; charset=utf-8", body: html)
        case "app.js": Asset(contentType: "text/javascript; charset=utf-8", body: script)
        case "app.css": Asset(contentType: "text/css; charset=utf-8", body: style)
        default: nil
        }
    }
}
