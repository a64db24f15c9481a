package account

import "slices"

// The Google scopes drivemail's features need; a user grants them on
// Google's consent page, and may decline some. Each feature asks one
// method below, never a list of its own.
var (
	// addFilesScopes let drivemail create files in the user's Drive
	// (uploads, save_to_drive): drive.file reaches only what drivemail
	// made or the user opened with it.
	addFilesScopes = []string{
		"https://www.googleapis.com/auth/drive.file",
		"https://www.googleapis.com/auth/drive",
	}
	// readDriveScopes let drivemail read any file in the user's Drive;
	// without one, drive.file reaches only the files the user handed it.
	readDriveScopes = []string{
		"https://www.googleapis.com/auth/drive.readonly",
		"https://www.googleapis.com/auth/drive",
	}
	// pickScope lets Google's Picker hand drivemail the files the user
	// chooses (drive_pick), and drivemail read them.
	pickScope = "https://www.googleapis.com/auth/drive.file"
	// draftScopes let drivemail save Gmail drafts (create_draft).
	draftScopes = []string{
		"https://www.googleapis.com/auth/gmail.compose",
		"https://www.googleapis.com/auth/gmail.modify",
		"https://mail.google.com/",
	}
	// readMailScopes let drivemail read the user's mail (search_mail,
	// replies, forwards, Gmail attachments).
	readMailScopes = []string{
		"https://www.googleapis.com/auth/gmail.readonly",
		"https://www.googleapis.com/auth/gmail.modify",
		"https://mail.google.com/",
	}
	// sendAsScopes let drivemail read the user's send-as addresses and
	// their signatures (from, signature): users.settings.sendAs.list
	// takes these, never gmail.send or gmail.compose.
	sendAsScopes = []string{
		"https://www.googleapis.com/auth/gmail.readonly",
		"https://www.googleapis.com/auth/gmail.settings.basic",
		"https://www.googleapis.com/auth/gmail.modify",
		"https://mail.google.com/",
	}
)

// fullDriveScope reaches every file the user may change, sharing
// included; drive.file only those drivemail made or the user opened with
// it.
const fullDriveScope = "https://www.googleapis.com/auth/drive"

// MayShare reports whether drivemail may change the sharing of a file
// the user may share: with the drive scope any such file; with drive.file
// one drivemail created or the user opened with drivemail (appFile,
// Drive's isAppAuthorized). drive.readonly never may.
func (a *Account) MayShare(appFile bool) bool {
	return a.user.HasScope(fullDriveScope) || appFile && a.MayAddFiles()
}

// MayAddFiles reports whether the user let drivemail create files in
// their Drive.
func (a *Account) MayAddFiles() bool { return a.grantedAny(addFilesScopes) }

// MayPick reports whether the user let drivemail open the Drive files
// they choose in Google's Picker (drive.file).
func (a *Account) MayPick() bool { return a.user.HasScope(pickScope) }

// SeesOnlyHandedFiles reports whether drivemail sees only the Drive
// files the user handed it (picked, uploaded, saved, made by drivemail):
// drive.file, and no scope that reads the rest of their Drive.
func (a *Account) SeesOnlyHandedFiles() bool { return a.MayPick() && !a.grantedAny(readDriveScopes) }

// MayDraft reports whether the user let drivemail save Gmail drafts.
func (a *Account) MayDraft() bool { return a.grantedAny(draftScopes) }

// MayReadMail reports whether the user let drivemail read their mail.
func (a *Account) MayReadMail() bool { return a.grantedAny(readMailScopes) }

// MayReadSendAs reports whether the user let drivemail read their Gmail
// send-as addresses and signatures.
func (a *Account) MayReadSendAs() bool { return a.grantedAny(sendAsScopes) }

func (a *Account) grantedAny(scopes []string) bool {
	return slices.ContainsFunc(scopes, a.user.HasScope)
}
