package upload

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/oauth/googleauth"
)

// Error is a refusal the caller can act on, with the HTTP status it goes
// out with. Its refusal.Refusal is the sentence that says what was wrong
// and what to do instead (the request_upload tool shows the model the
// same), its kind names it in the log ("name_mismatch": the sentence may
// quote what the caller sent, a file name, which logs never carry), and
// its Err is the cause, for the log; it is never shown.
type Error struct {
	*refusal.Refusal
	Status int
	// RetryAfter, when set, goes out as the Retry-After header.
	RetryAfter time.Duration
	// Operator, when set, is what whoever runs drivemail must do: the
	// refusal is theirs to lift, not the user's. It is logged, at ERROR,
	// as operator=; never shown to the user.
	Operator string
}

// Unwrap gives the refusal, and through it the cause.
func (e *Error) Unwrap() error { return e.Refusal }

func refuse(status int, kind refusal.Kind, format string, args ...any) *Error {
	return &Error{Status: status, Refusal: refusal.New(kind, format, args...)}
}

// because records the cause of a refusal for the log line.
func (e *Error) because(err error) *Error {
	e.Err = err
	return e
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // sentences stay readable to curl and shell scripts
	_ = enc.Encode(v)
}

// writeError answers a refusal with its status and sentence, or anything
// else with a generic 500 that carries the request id (set on the response
// by the server's logging middleware) and nothing of the cause.
func writeError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		msg := "drivemail hit an internal error and saved nothing"
		if id := w.Header().Get("X-Request-Id"); id != "" {
			msg += " (request id " + id + ")"
		}
		e = refuse(http.StatusInternalServerError, kindInternal, "%s. Try again; if it keeps failing, give the request id to whoever runs this server.", msg)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, e.Status, map[string]string{"error": e.Text})
}

// googleRefusal says what a failed Drive or Google-token call means for
// the user. Google's own error text never reaches it (drive.Error carries
// none); folderGiven tells a missing folder from a lost file. Only a
// refused token or scope sends the user to sign in again, and only a rate
// limit or an outage to try again in a minute: a limit or a policy would
// refuse that retry too.
func googleRefusal(err error, folderGiven bool) *Error {
	if e := driveLimitRefusal(err, folderGiven); e != nil {
		return e.because(err)
	}
	switch {
	case errors.Is(err, googleauth.ErrReconnect):
		return refuse(http.StatusForbidden, kindReconnect, "%s Nothing was saved.", googleauth.ErrReconnect.Error()).because(err)
	case errors.Is(err, drive.ErrAPIDisabled):
		return refuse(http.StatusServiceUnavailable, kindDriveAPIDisabled, "This drivemail server's Google Cloud project has not enabled the Google Drive API, so nothing was saved. Ask whoever runs drivemail to enable it.").because(err)
	case errors.Is(err, drive.ErrNotFound) && folderGiven:
		return refuse(http.StatusNotFound, kindFolderNotFound, "The folder given as folder_id was not found (or is in the trash), or drivemail cannot see it: with the drive.file permission it can only put files in folders it created. Leave folder_id out to use the %q folder.", DefaultFolderName).because(err)
	case errors.Is(err, drive.ErrNotFolder) && folderGiven:
		return refuse(http.StatusBadRequest, kindNotAFolder, "folder_id names a file, not a folder, so nothing was saved. Give a folder's id, or leave folder_id out to use the %q folder.", DefaultFolderName).because(err)
	case errors.Is(err, drive.ErrAppNotAuthorized) && folderGiven:
		return refuse(http.StatusForbidden, kindFolderNotWritable, "drivemail may put files only in folders it created (such as %q) or that you opened with it: Google gives it no other (its drive.file permission), and the folder given as folder_id is not one of them, so nothing was saved. Leave folder_id out to use the %q folder.", DefaultFolderName, DefaultFolderName).because(err)
	case errors.Is(err, drive.ErrFilePermission) && folderGiven:
		return refuse(http.StatusForbidden, kindFolderReadOnly, "You may not add files to the folder given as folder_id (it is shared with you read-only), so nothing was saved. Leave folder_id out to use the %q folder.", DefaultFolderName).because(err)
	case errors.Is(err, drive.ErrBadID):
		return refuse(http.StatusBadRequest, kindBadFolderID, "folder_id is not a Drive folder id (ids are letters, digits, '-' and '_'). Leave it out to use the %q folder.", DefaultFolderName).because(err)
	case errors.Is(err, drive.ErrScope), errors.Is(err, drive.ErrUnauthorized):
		return refuse(http.StatusForbidden, kindDriveDenied, "Google refused drivemail access to your Drive, so nothing was saved. Reconnect drivemail (sign in again) and allow it to add files to your Drive.").because(err)
	case errors.Is(err, drive.ErrDomainPolicy):
		return refuse(http.StatusForbidden, kindDriveDomainPolicy, "Your Workspace administrator's policy does not let drivemail add files to your Google Drive, so nothing was saved. Ask your administrator to allow drivemail to use Drive.").because(err)
	case errors.Is(err, drive.ErrRateLimited):
		e := refuse(http.StatusServiceUnavailable, kindDriveRateLimited, "Google Drive is limiting how fast files can be added, so nothing was saved. Try again in a minute.")
		e.RetryAfter = time.Minute
		return e.because(err)
	case errors.Is(err, drive.ErrForbidden):
		// A 403 not known to be the token's, a limit's or a policy's:
		// signing in again would not change it, and it may not last.
		return refuse(http.StatusBadGateway, kindDriveFailed, "Google Drive refused to store the file for this account, so nothing was saved. Try again later; if it keeps failing, tell whoever runs drivemail.").because(err)
	}
	return refuse(http.StatusBadGateway, kindDriveFailed, "Google Drive did not take the file (it may be briefly unavailable), so nothing was saved. Try again in a minute.").because(err)
}

// driveLimitRefusal is the refusal of a Drive limit, told by its reason
// (Drive's guides to its errors and limits): the user's storage, the
// items an account may create, a folder or shared drive, or the project's
// daily quota. It is nil for any other error.
func driveLimitRefusal(err error, folderGiven bool) *Error {
	var de *drive.Error
	if !errors.As(err, &de) {
		return nil
	}
	switch de.Reason {
	// Drive has also answered a full Drive with quotaExceeded, which
	// classify takes for a download quota: an upload downloads nothing.
	case "storageQuotaExceeded", "quotaExceeded":
		return refuse(http.StatusInsufficientStorage, kindDriveFull, "Your Google Drive is full, so the file was not saved. Free some space in Drive, then upload again.")
	case "activeItemCreationLimitExceeded":
		// The limit counts trashed items, so only deleting for good helps.
		return refuse(http.StatusInsufficientStorage, kindDriveFull, "This Google account has made as many files as Google Drive lets one account create, so nothing was saved. Delete files you no longer need from Drive and empty its trash (files in the trash count too), then upload again.")
	case "numChildrenInNonRootLimitExceeded":
		if folderGiven {
			return refuse(http.StatusInsufficientStorage, kindFolderFull, "The folder given as folder_id holds as many files as Google Drive allows in one folder, so nothing was saved. Choose another folder as folder_id, or leave folder_id out to use the %q folder.", DefaultFolderName)
		}
		return refuse(http.StatusInsufficientStorage, kindFolderFull, "The %q folder holds as many files as Google Drive allows in one folder, so nothing was saved. Move some of its files to another folder in Drive, then upload again.", DefaultFolderName)
	case "teamDriveFileLimitExceeded":
		// drivemail's own folder is in My Drive: only a folder_id can
		// lead into a shared drive.
		if folderGiven {
			return refuse(http.StatusInsufficientStorage, kindFolderFull, "The shared drive that holds the folder given as folder_id holds as many files as Google Drive allows, so nothing was saved. Choose a folder outside that shared drive as folder_id, or leave folder_id out to use the %q folder.", DefaultFolderName)
		}
	case "dailyLimitExceeded":
		e := refuse(http.StatusServiceUnavailable, kindDriveDailyQuota, "drivemail has used up its daily Google Drive quota, which all its users share, so nothing was saved. Google resets it within a day: try again then, or ask whoever runs drivemail to raise the quota.")
		e.Operator = "the Google Cloud project's daily Google Drive API quota is used up, for every user: request a higher quota in the Google Cloud console (APIs & Services, Google Drive API, Quotas)"
		return e
	}
	return nil
}
