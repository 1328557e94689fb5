package datasets

import (
	"context"

	"github.com/prewarm/prewarm/store"
)

// ImportChunk is how many steps ImportInChunks writes between two
// progress reports.
const ImportChunk = 2000

// ImportInChunks is Import over s in runs of ImportChunk steps, reporting
// the steps done to progress (nil: none) as the stage "importing steps"
// after each, so that a long import shows it is moving; the results add
// up to Import's over the whole series.
func ImportInChunks(ctx context.Context, st interface {
	store.Writer
	store.Querier
}, s Series, opts ImportOptions, progress func(stage string, done, total int)) (Imported, error) {
	var res Imported
	if len(s.Values) == 0 {
		return Import(ctx, st, s, opts)
	}
	for from := 0; from < len(s.Values); from += ImportChunk {
		part := s
		part.Start, part.Values = s.Time(from), s.Values[from:min(from+ImportChunk, len(s.Values))]
		r, err := Import(ctx, st, part, opts)
		res = res.add(r)
		if err != nil {
			return res, err
		}
		if progress != nil {
			progress("importing steps", from+len(part.Values), len(s.Values))
		}
	}
	return res, nil
}

// add adds what one run of Import wrote to the runs' before it.
func (sum Imported) add(r Imported) Imported {
	if r.Steps > 0 {
		if sum.Steps == 0 {
			sum.First = r.First
		}
		sum.Last = r.Last
	}
	sum.Points += r.Points
	sum.Steps += r.Steps
	sum.Missing += r.Missing
	sum.Overlapping += r.Overlapping
	return sum
}
