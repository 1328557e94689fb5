package datasets

import (
	"errors"
	"fmt"
	"io"
)

// MaxListedBadRows is how many bad rows ListBadRows prints before
// summarising the rest.
const MaxListedBadRows = 20

// ListBadRows prints the bad rows of a *BadRowsError in err to w, one
// "file:line: column: problem" per line (the first MaxListedBadRows), and
// returns a short error naming input; other errors are returned as they
// are.
func ListBadRows(w io.Writer, err error, input string) error {
	var bad *BadRowsError
	if !errors.As(err, &bad) {
		return err
	}
	for i, r := range bad.Rows {
		if i == MaxListedBadRows {
			fmt.Fprintf(w, "... and %d more bad rows\n", len(bad.Rows)-i)
			break
		}
		fmt.Fprintln(w, r.Error())
	}
	return fmt.Errorf("%s: %d bad rows; fix them and run again", input, len(bad.Rows))
}
