package drive

import (
	"errors"
	"testing"
)

func TestQueryType(t *testing.T) {
	q, err := Query{Type: "PDFs"}.Q()
	if err != nil || q != "(mimeType = 'application/pdf') and trashed = false" {
		t.Errorf("pdf: %q %v", q, err)
	}
	q, err = Query{Text: "logo", Type: "image"}.Q()
	if err != nil || q != "(name contains 'logo' or fullText contains 'logo') and (mimeType contains 'image/') and trashed = false" {
		t.Errorf("image: %q %v", q, err)
	}
	if _, err := (Query{Type: "spreadsheets please"}).Q(); !errors.Is(err, ErrQueryType) {
		t.Errorf("unknown word: %v", err)
	}
	if _, err := (Query{Type: "image/png"}).Q(); !errors.Is(err, ErrQueryType) {
		t.Errorf("a MIME type goes in MimeType, not Type: %v", err)
	}
}
