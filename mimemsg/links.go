package mimemsg

// Link is a file sent as a link in the body (a native Google file, or a
// file too large to attach).
type Link struct {
	Name string // shown to the reader
	URL  string // https only
}

// AddLinks appends a section listing links to the text and HTML bodies:
// a line "Name: URL" each in the text, a list of <a href> in the HTML
// (names escaped; inserted before </body> when there is one). An empty
// HTML body stays empty; an empty text body gets just the list. Every URL
// must be an absolute https URL without user info or control characters;
// otherwise the error is an *InputError.
func AddLinks(text, html string, links []Link) (newText, newHTML string, err error) {
	panic("mimemsg: AddLinks not implemented yet")
}
