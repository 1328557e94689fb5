package datasets

import (
	"strconv"
	"time"
)

// Stamp formats the time of step i of s as a file of it would write it:
// RFC 3339 in UTC, or the plain index for an indexed file (loaded with the
// default index unit, so a file indexed 10, 12, 14 continues 16, 18).
func (s Series) Stamp(i int) string {
	if s.Index {
		return strconv.FormatInt(int64(s.Time(i).Sub(time.Unix(0, 0))/DefaultIndexUnit), 10)
	}
	return s.Time(i).UTC().Format(time.RFC3339)
}
