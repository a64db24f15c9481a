package stream

import "io"

// Body is a response body read under a Watch; Close stops the watch.
// A read that fails because the watch fired returns what onFire makes
// of the read's error (the caller's name for a stall) instead.
type Body struct {
	rc     io.ReadCloser
	w      *Watch
	idle   bool
	onFire func(err error) error
}

// IdleBody hands rc over to w with the clock running only inside Read:
// each Read waits on the far side for at most w's idle time, and time
// spent between reads does not count. w should be paused when it is
// handed over.
func IdleBody(rc io.ReadCloser, w *Watch, onFire func(err error) error) *Body {
	return &Body{rc: rc, w: w, idle: true, onFire: onFire}
}

// TimedBody hands rc over to w with the clock left as the caller runs it
// (a bound on a whole request, answer included): Read only names a
// failure the watch caused.
func TimedBody(rc io.ReadCloser, w *Watch, onFire func(err error) error) *Body {
	return &Body{rc: rc, w: w, onFire: onFire}
}

func (b *Body) Read(p []byte) (int, error) {
	if b.idle {
		b.w.Resume()
	}
	n, err := b.rc.Read(p)
	if b.idle {
		b.w.Pause()
	}
	if err != nil && err != io.EOF && b.w.Fired() != nil && b.onFire != nil {
		err = b.onFire(err)
	}
	return n, err
}

// Close stops the watch and closes the body.
func (b *Body) Close() error {
	b.w.Stop()
	return b.rc.Close()
}
