package mimemsg

import "fmt"

// InputError is a message that cannot be built as given: a bad address,
// a subject with a line break, a missing recipient. Its Error text is a
// sentence for the user that says what was wrong and what to do instead.
type InputError struct {
	// Field is the header or part at fault: "to", "subject", "attachment",
	// or FieldRecipients for the count of to, cc and bcc together.
	Field string
	msg   string
}

func (e *InputError) Error() string { return e.msg }

// FieldRecipients is the InputError field of a message with more
// recipients than Limits.MaxRecipients: no one address is at fault.
const FieldRecipients = "recipients"

func inputErr(field, format string, args ...any) *InputError {
	return &InputError{Field: field, msg: fmt.Sprintf(format, args...)}
}

// LimitError is a message that grew past one of its Limits while it
// streamed. Nothing after the breach was written.
type LimitError struct {
	// What is "files" (MaxFileBytes) or "message" (MaxBytes).
	What  string
	Limit int64
}

func (e *LimitError) Error() string {
	if e.What == "files" {
		return fmt.Sprintf("the attached files come to more than %s, Gmail's limit for attachments; send the largest ones as links instead, or split them across messages", mib(e.Limit))
	}
	return fmt.Sprintf("the encoded message would be larger than %s, Gmail's limit; send some files as links instead, or split them across messages", mib(e.Limit))
}

// mib formats a byte count for a sentence: "25 MiB (26,214,400 bytes)".
func mib(n int64) string {
	s := fmt.Sprint(n)
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB (%s bytes)", n>>20, b)
	}
	return string(b) + " bytes"
}
