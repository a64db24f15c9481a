// Package compose turns one send_email or create_draft request into one
// Gmail message, or refuses having sent nothing. A send runs in phases,
// each finished before the next begins:
//
//	validate  no network: bodies, reply headers, headers, each attachment's
//	          own rules, content decoded (validate.go)
//	resolve   Drive metadata of every Drive file, 5 at a time (resolve.go)
//	plan      attach, export, link or inline; the limits known from
//	          metadata: files, bytes, encoded size, blocked names (plan.go,
//	          limits.go); the message assembled and validated (build.go)
//	check     what metadata cannot tell: zip directories and gzip headers
//	          by Range reads (build.go); who can open each link, from its
//	          permissions (access.go)
//	stream    in a sending slot, the share options granted first
//	          (share.go), then Drive → MIME writer → Gmail, one pass,
//	          flat memory (stream.go), each part opened ahead of the
//	          writer (prefetch.go)
//
// An Attachment has exactly one Source; request.go says how a new source
// joins each phase. Refusals are *refusal.Refusal (refusal.go, errors.go,
// kinds.go). The decisions behind the phases are in docs/architecture.md.
package compose
