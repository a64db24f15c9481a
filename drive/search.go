package drive

import (
	"context"
	"errors"
	"strings"
)

// Page is one page of search results.
type Page struct {
	Files         []File
	NextPageToken string
}

// listFields asks files.list for the same fields files.get reads.
const listFields = "nextPageToken,incompleteSearch,files(" + fileFields + ")"

// Search lists the user's files matching q, across My Drive, shared-with-me
// and shared drives, never trashed files. Plain listings come newest first;
// text searches come in Drive's relevance order (Drive refuses orderBy
// with fullText).
func (c *Client) Search(ctx context.Context, q Query) (Page, error) {
	expr, err := q.Q()
	if err != nil {
		return Page{}, err
	}
	size := q.PageSize
	if size == 0 {
		size = DefaultPageSize
	}
	call := c.files.List().Q(expr).PageSize(int64(size)).
		Corpora("allDrives").IncludeItemsFromAllDrives(true).SupportsAllDrives(true).
		Fields(listFields).Context(ctx)
	if strings.TrimSpace(q.Text) == "" {
		call = call.OrderBy("modifiedTime desc")
	}
	if q.PageToken != "" {
		call = call.PageToken(q.PageToken)
	}
	res, err := call.Do()
	if err != nil {
		err = c.wrap("files.list", err)
		var de *Error
		if q.PageToken != "" && errors.As(err, &de) && de.Code == 400 {
			return Page{}, ErrQueryToken
		}
		return Page{}, err
	}
	page := Page{Files: make([]File, 0, len(res.Files)), NextPageToken: res.NextPageToken}
	for _, f := range res.Files {
		page.Files = append(page.Files, fromAPI(f))
	}
	return page, nil
}
