package server

import (
	"io"
	"net/http"
	"sync"
)

// inProcess is an http.RoundTripper that serves every request with h in
// this process, through pipes, so that a client and the server run inside
// one testing/synctest bubble: time moves on when every goroutine waits,
// and the bubble ends only when all of them, the server's too, have.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.RemoteAddr = "127.0.0.1:1"
	r.RequestURI = req.URL.RequestURI()
	r.Host = req.URL.Host
	if r.Body == nil {
		r.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		p.h.ServeHTTP(w, r)
		w.WriteHeader(http.StatusOK)
		pw.Close()
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.Close()
		return nil, req.Context().Err()
	}
	go func() { // the client gone, the handler's writes fail as on a closed connection
		select {
		case <-req.Context().Done():
			pr.CloseWithError(req.Context().Err())
		case <-served:
		}
	}()
	return &http.Response{Status: http.StatusText(w.status), StatusCode: w.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.sent, Body: pr, ContentLength: -1, Request: req}, nil
}

// pipeWriter is the server's side of one in-process exchange.
type pipeWriter struct {
	header http.Header
	sent   http.Header // the header as it was when the status went out
	body   *io.PipeWriter
	once   sync.Once
	status int
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

func (w *pipeWriter) Flush() { w.WriteHeader(http.StatusOK) }
