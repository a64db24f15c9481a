package drivesvc

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// apiError is a Drive error ready to be written: Google's body with one
// item, optionally naming the parameter (or the Authorization header) at
// fault.
type apiError struct {
	code     int
	reason   string
	message  string
	location string // a parameter name; empty for none
}

func (e *apiError) Error() string { return e.message }

func (e *apiError) body() core.ErrorBody {
	b := core.NewError(e.code, e.reason, e.message)
	if e.location != "" {
		b.Error.Errors[0].Location = e.location
		b.Error.Errors[0].LocationType = "parameter"
		if e.location == "Authorization" {
			b.Error.Errors[0].LocationType = "header"
		}
	}
	return b
}

func (e *apiError) write(w http.ResponseWriter) { core.WriteErrorBody(w, e.body()) }

// echo cuts a client-supplied value for an error text: Google repeats ids
// and values back, and a huge one must not make a huge error.
func echo(s string) string {
	const max = 200
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// errFileNotFound is Google's answer both for a missing id and for a file
// the caller may not see: the two must be indistinguishable.
func errFileNotFound(id string) *apiError {
	return &apiError{http.StatusNotFound, "notFound", "File not found: " + echo(id) + ".", "fileId"}
}

func errDriveNotFound(id string) *apiError {
	return &apiError{http.StatusNotFound, "notFound", "Shared drive not found: " + echo(id), "driveId"}
}

// errAppNotAuthorized is Drive's 403 for a drive.file app writing to a
// file it did not create and was not opened with ("Resolve errors":
// "The user has not granted the app {appId} {verb} access to the file
// {fileId}."). The app is named by its project number.
func errAppNotAuthorized(client, id string) *apiError {
	return &apiError{http.StatusForbidden, "appNotAuthorizedToFile",
		"The user has not granted the app " + core.ProjectNumber(client) + " write access to the file " + echo(id) + ".", "Authorization"}
}

// errInvalid is Google's terse 400 for a bad parameter value.
func errInvalid(param string) *apiError {
	return &apiError{http.StatusBadRequest, "invalid", "Invalid Value", param}
}

// errOutOfRange is Google's 400 for a number outside its range.
func errOutOfRange(raw, param string, lo, hi int) *apiError {
	return &apiError{http.StatusBadRequest, "invalid",
		"Invalid value '" + echo(raw) + "'. Values must be within the range: [" + strconv.Itoa(lo) + ", " + strconv.Itoa(hi) + "]", param}
}

func errRequired(param string) *apiError {
	return &apiError{http.StatusBadRequest, "required", "Required parameter: " + param, param}
}

func errBadRequest(message, param string) *apiError {
	return &apiError{http.StatusBadRequest, "badRequest", message, param}
}

func errFieldSelection(field string) *apiError {
	return &apiError{http.StatusBadRequest, "invalidParameter", "Invalid field selection " + echo(field), "fields"}
}

var (
	errNotDownloadable = &apiError{http.StatusForbidden, "fileNotDownloadable",
		"Only files with binary content can be downloaded. Use Export with Docs Editors files.", "alt"}
	errCannotDownload = &apiError{http.StatusForbidden, "cannotDownloadFile",
		"The user does not have sufficient permissions to download this file.", ""}
	errNotExportable = &apiError{http.StatusForbidden, "fileNotExportable",
		"Export only supports Docs Editors files.", ""}
	errExportTooLarge = &apiError{http.StatusForbidden, "exportSizeLimitExceeded",
		"This file is too large to be exported.", ""}
	errConversion = &apiError{http.StatusBadRequest, "badRequest",
		"The requested conversion is not supported.", "convertTo"}
	errInsufficientFilePermissions = &apiError{http.StatusForbidden, "insufficientFilePermissions",
		"The user does not have sufficient permissions for this file.", ""}
)
