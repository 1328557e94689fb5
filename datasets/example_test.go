package datasets_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prewarm/prewarm/datasets"
)

// A trace with an out-of-order row, a repeated timestamp and a missing
// hour: the series is sorted, the duplicate summed (counts) and the gap
// filled with NaN, and the report lists each repair by line.
func ExampleReadCSV() {
	const trace = `hour_start,requests
2024-11-15 16:00:00,10
2024-11-15 18:00:00,30
2024-11-15 17:00:00,20
2024-11-15 17:00:00,5
2024-11-15 20:00:00,50
`
	s, rep, err := datasets.ReadCSV(strings.NewReader(trace), "requests.csv", datasets.CSVOptions{Counts: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Start.Format(time.DateTime), s.Step, s.Values)
	fmt.Println(rep)
	// Output:
	// 2024-11-15 16:00:00 1h0m0s [10 25 30 NaN 50]
	// requests.csv: 5 rows, 5 accepted, step 1h0m0s (inferred), aggregate sum, column "requests"
	//   gaps: 1 missing steps in 1 runs, filled with NaN; 1 at 2024-11-15T19:00:00Z
	//   duplicate timestamps: 1, merged by sum; lines 5 (first 4)
	//   out-of-order rows: 2, sorted; lines 4 5
}

// A bad row fails the load with its file, line and column unless SkipBad
// is set.
func ExampleReadCSV_badRow() {
	const trace = "timestamp,value\n2024-01-01 00:00,1\n2024-01-01 00:01,-4\n2024-01-01 00:02,3\n"
	_, _, err := datasets.ReadCSV(strings.NewReader(trace), "demand.csv", datasets.CSVOptions{})
	fmt.Println(err)
	fmt.Println(errors.Is(err, datasets.ErrBadRow))

	s, rep, _ := datasets.ReadCSV(strings.NewReader(trace), "demand.csv", datasets.CSVOptions{SkipBad: true})
	fmt.Println(s.Values, rep.Bad[0].Line)
	// Output:
	// demand.csv:3: value: negative value -4; fix the file, or use --skip-bad to skip the bad rows and list them
	// true
	// [1 NaN 3] 3
}

func ExampleSynthetic_Generate() {
	g := datasets.DefaultSynthetic()
	g.Noise, g.TrendPerWeek, g.FlashCrowdsPerWeek = 0, 0, 0 // the bare daily cycle
	start := time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)    // a Wednesday
	s := g.Generate(start, 4*time.Hour, 6)
	for i, v := range s.Values {
		fmt.Printf("%s %5.1f req/s\n", s.Time(i).Format("Mon 15:04"), v)
	}
	// Output:
	// Wed 00:00  30.0 req/s
	// Wed 04:00  30.1 req/s
	// Wed 08:00 115.0 req/s
	// Wed 12:00 183.6 req/s
	// Wed 16:00 199.9 req/s
	// Wed 20:00 115.0 req/s
}
