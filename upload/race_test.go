package upload_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/upload"
)

// TestFirstUploadsRacingKeepTheirFiles: a new user's first uploads, at
// once on two replicas, each make the uploads folder if they find none.
// Every file must stand, however the folders race out, in every round.
// It takes three callers for one to take a folder that another then
// drops, so six uploads race (within MaxPerUser on each replica).
func TestFirstUploadsRacingKeepTheirFiles(t *testing.T) {
	e := newEnv(t)
	replica := e.replica()
	const rounds, uploads = 12, 6
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for round := range rounds {
		u := e.signIn(fmt.Sprintf("racer%d@example.com", round))
		data := make([][]byte, uploads)
		results := make([]upload.Result, uploads)
		errs := make([]error, uploads)
		var wg sync.WaitGroup
		for i := range uploads {
			data[i] = pattern(1000*(i+1) + round)
			origin := e.base
			if i%2 == 1 {
				origin = replica
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = postRaw(ctx, origin, u.token, fmt.Sprintf("file-%d.bin", i), data[i])
			}()
		}
		wg.Wait()
		for i := range uploads {
			if errs[i] != nil {
				t.Fatalf("round %d, upload %d: %v", round, i, errs[i])
			}
			f, ok := e.emu.Drive().FileByID(results[i].FileID)
			if !ok || f.Trashed {
				t.Fatalf("round %d: upload %d answered 201 but its file %s is gone", round, i, results[i].FileID)
			}
			if got := e.stored(f.ID); !bytes.Equal(got, data[i]) {
				t.Fatalf("round %d: upload %d: Drive holds %d bytes, want the %d sent", round, i, len(got), len(data[i]))
			}
			folder, ok := e.emu.Drive().FileByID(f.Parents[0])
			if !ok || folder.Name != upload.DefaultFolderName || folder.MimeType != drive.MimeFolder {
				t.Fatalf("round %d: upload %d is in %+v, want the %q folder", round, i, folder, upload.DefaultFolderName)
			}
		}
		if n := len(e.files(u)); n != uploads {
			t.Fatalf("round %d: %d files in Drive, want %d", round, n, uploads)
		}
	}
}

// postRaw uploads data as a raw body named name, and returns the 201
// answer or what went wrong (safe to call from any goroutine).
func postRaw(ctx context.Context, origin, token, name string, data []byte) (upload.Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, origin+"/upload?name="+name, bytes.NewReader(data))
	if err != nil {
		return upload.Result{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return upload.Result{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		return upload.Result{}, fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	var r upload.Result
	if err := json.Unmarshal(body, &r); err != nil {
		return upload.Result{}, fmt.Errorf("unreadable 201 body %q: %w", body, err)
	}
	return r, nil
}
