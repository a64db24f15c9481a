// Package compose turns one send_email or create_draft request into one
// Gmail message: resolve every attachment's metadata, plan, check limits,
// and only then stream Drive content through the MIME writer into Gmail,
// in one pass with flat memory, or refuse having sent nothing.
//
//	parse entries (no network) → From → validate headers → files.get for
//	every Drive entry (5 at a time, shortcuts followed) → plan → limits →
//	zip directories and gzip headers by Range reads → wait for a send
//	slot → stream
//
// Decisions, where the contract leaves room:
//
//   - Model-written bytes: {name, text} counts towards the 1 MiB summed
//     cap like base64 and data: content: the model wrote it all.
//   - csv/tsv of a Sheet without `sheet` exports the first tab, as Drive
//     does, and Attached.Sheet says which tab went. A named tab matches
//     exactly, else ignoring case and surrounding spaces when that is
//     unambiguous; otherwise the refusal lists the tabs.
//   - mcp-file://<host>/<id> handles are accepted whatever the host: the
//     handle only wraps a Drive id, and Drive checks with the user's own
//     token that they may read it. Drive web links are accepted as ids too.
//   - A cid: reference matches a file's name in the message, else the
//     name given, else its Drive name (exactly, else ignoring case when
//     unambiguous). A plain name (letters, digits, . _ -) is kept as the
//     Content-ID, so the HTML stays as written; other names get a
//     generated id and the HTML is rewritten to match.
//   - From is the signed-in account's address from the identity in the
//     context; Gmail's users.getProfile (cached per user for ProfileTTL) is
//     asked only without one, because it needs a scope beyond gmail.send.
//   - A binary file's own extension stays last when it is renamed
//     ("x.exe" for a PDF becomes "x.exe.pdf"); blocked names are checked
//     on both the Drive name and the name in the message.
//   - Retries: Drive metadata and opening a stream are retried on 5xx, 429
//     and resets (3 tries). A whole pass is restarted after a transient
//     Drive failure only while no request has reached Gmail (the first
//     upload chunk was still filling). Once Gmail has bytes, only the
//     Google client's own chunk retries apply, so nothing is sent twice.
//   - Gmail's 200 to the final chunk with its body cut off means the
//     message was sent: the refusal says so and that it must not be sent
//     again. Only a final request with no answer at all is reported as
//     "may or may not have been sent".
//   - The concurrency cap is taken only for streaming, after every check,
//     so refusals never wait behind other users' sends.
//   - No send holds its slot on a silent Google: Drive sending nothing
//     for DriveIdleTimeout (60 s; time spent waiting on Gmail does not
//     count) and a Gmail upload request unanswered for GmailChunkTimeout
//     (2 min; a chunk is tried twice) abandon the message. A Gmail failure
//     cancels the Drive read the message writer waits on.
//   - An internal error that provably sent nothing is an *Unsent, so the
//     tools can say so instead of "check the Sent folder".
package compose
