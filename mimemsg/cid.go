package mimemsg

// CIDRefs returns the distinct names an HTML body references as
// "cid:NAME" — in src="cid:…", src='cid:…', src=cid:…, url(cid:…),
// url("cid:…"), srcset lists — in order of first appearance. The scheme is
// matched in any case; NAME is HTML-unescaped (&amp;) and then
// %-decoded, so "cid:my%20logo.png" is "my logo.png".
func CIDRefs(html string) []string {
	panic("mimemsg: CIDRefs not implemented yet")
}

// RewriteCIDs returns html with every cid: reference whose decoded NAME
// is a key of ids pointing at cid:ids[NAME] instead (the ids come from
// NewContentID). Other references are left as they are.
func RewriteCIDs(html string, ids map[string]string) string {
	panic("mimemsg: RewriteCIDs not implemented yet")
}

// NewContentID returns a fresh Content-ID for an inline part, without
// angle brackets: "ii_<16 hex digits>@drivemail", safe in a header and in
// a cid: URL whatever the file is called.
func NewContentID() string {
	panic("mimemsg: NewContentID not implemented yet")
}
