//! Which rejections of `fetch` are network failures, as each JavaScript
//! runtime words them. Kept here, once, for both fetch drivers: the web
//! crate reads [`NETWORK_ERROR_PREFIXES`] directly, and the npm package gets
//! it rendered as a regular expression (`js/gen/policy.js`, by `xtask`).

/// How the message of a network failure of `fetch` begins, in each runtime:
/// Chromium (`Failed to fetch`), Firefox (`NetworkError when attempting to
/// fetch resource.`), Safari (`Load failed`, `The Internet connection
/// appears to be offline.`), undici in Node (`fetch failed`, `terminated`),
/// Deno (`error sending request…`; `error reading a body from connection`
/// when a body breaks, which the stream entry resumes), Bun (`ECONNRESET…`, `Unable to
/// connect…`), workerd (`Network connection lost.`, a plain `Error`),
/// React Native and cross-fetch (`Network request failed`), and the
/// `connection refused/reset/closed` wordings of other fetch functions.
///
/// Whatever else `fetch` rejects with is not a network failure: a request
/// it refused to build (an invalid URL, a forbidden method or header), or a
/// bug in a fetch function. A retry would fail the same way, so the drivers
/// do not retry those (unless the caller's decision hook says so).
///
/// Letters and spaces only, so that the JavaScript side can join them into
/// a regular expression as they are.
///
/// ```
/// use wasm_backoff_core::NETWORK_ERROR_PREFIXES;
/// assert!(NETWORK_ERROR_PREFIXES.contains(&"Failed to fetch"));
/// assert!(NETWORK_ERROR_PREFIXES.iter().all(|p| p.bytes().all(|b| b == b' ' || b.is_ascii_alphabetic())));
/// ```
pub const NETWORK_ERROR_PREFIXES: [&str; 24] = [
    "Failed to fetch",
    "fetch failed",
    "Load failed",
    "NetworkError",
    "Network error",
    "network error",
    "Network request failed",
    "network request failed",
    "Network connection lost",
    "network connection lost",
    "A network error",
    " A network error",
    "The Internet connection",
    "terminated",
    "error sending request",
    "error reading a body",
    "Unable to connect",
    "ECONN",
    "connection refused",
    "connection reset",
    "connection closed",
    "socket refused",
    "socket reset",
    "socket closed",
];

/// The `cause.code` of a rejection whose message reads as a network failure
/// but that is a request `fetch` refused to send: undici (Node's fetch)
/// rejects `Expect`, `Transfer-Encoding`, `Connection`, `Upgrade`,
/// `Keep-Alive` and a malformed `Content-Length` with `fetch failed`, its
/// cause saying which. Nothing was sent, and a retry would fail the same
/// way: the drivers neither retry it nor count it against the target.
///
/// ```
/// use wasm_backoff_core::REFUSED_REQUEST_CODES;
/// assert!(REFUSED_REQUEST_CODES.contains(&"UND_ERR_NOT_SUPPORTED"));
/// ```
pub const REFUSED_REQUEST_CODES: [&str; 2] = ["UND_ERR_INVALID_ARG", "UND_ERR_NOT_SUPPORTED"];

/// Whether an error message (of a `TypeError` or `Error` that `fetch`
/// rejected with) tells of a network failure: it begins with one of
/// [`NETWORK_ERROR_PREFIXES`], case and all.
///
/// ```
/// use wasm_backoff_core::is_network_error;
/// assert!(is_network_error("fetch failed")); // Node
/// assert!(is_network_error("NetworkError when attempting to fetch resource.")); // Firefox
/// assert!(!is_network_error("Failed to parse URL from nope")); // a request fetch cannot build
/// assert!(!is_network_error("Invalid URL"));
/// ```
pub fn is_network_error(message: &str) -> bool {
    // Bytes: no pattern searcher in the wasm of an app that calls this.
    let m = message.as_bytes();
    NETWORK_ERROR_PREFIXES
        .iter()
        .any(|p| m.starts_with(p.as_bytes()))
}
