package chart

import "time"

// YGrid draws a horizontal grid line (class "grid") across the plot area
// at each tick, labelled (class "tick") left of the area.
func (c *Canvas) YGrid(s Scale, ticks []Tick) {
	for _, t := range ticks {
		y := s.At(t.Value)
		c.Line("grid", c.Area.X0, y, c.Area.X1, y)
		c.Text("tick", c.Area.X0-6, y+4, End, t.Label)
	}
}

// XGrid draws a vertical grid line (class "grid") down the plot area at
// each tick, labelled (class "tick") under it, and the x axis's line
// (class "axis").
func (c *Canvas) XGrid(s Scale, ticks []Tick) {
	for _, t := range ticks {
		x := s.At(t.Value)
		c.Line("grid", x, c.Area.Y0, x, c.Area.Y1)
		c.Text("tick", x, c.Area.Y1+16, Middle, t.Label)
	}
	c.Line("axis", c.Area.X0, c.Area.Y1, c.Area.X1, c.Area.Y1)
}

// TimeTicks labels a time axis in loc: over two days or less, every 2 or
// 6 hours ("15:04", short ticks, class "axis"); over more, each midnight
// gets a vertical line (class "daygrid") and every 1st, 2nd, 7th or 14th
// day a label ("Mon 2", class "tick"), so that a few weeks stay legible.
// It draws the x axis's line (class "axis") too.
func (c *Canvas) TimeTicks(s TimeScale, loc *time.Location) {
	days := s.End.Sub(s.Start).Hours() / 24
	if days <= 2 {
		c.hourTicks(s, loc, days)
		return
	}
	every := 1
	switch {
	case days > 42:
		every = 14
	case days > 21:
		every = 7
	case days > 10:
		every = 2
	}
	local := s.Start.In(loc)
	d := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	for i := 0; d.Before(s.End); d, i = d.AddDate(0, 0, 1), i+1 {
		if d.Before(s.Start) {
			continue
		}
		x := s.At(d)
		c.Line("daygrid", x, c.Area.Y0, x, c.Area.Y1)
		if i%every == 0 && x < c.Area.X1-20 {
			c.Text("tick", x+3, c.Area.Y1+16, Start, d.Format("Mon 2"))
		}
	}
	c.Line("axis", c.Area.X0, c.Area.Y1, c.Area.X1, c.Area.Y1)
}

func (c *Canvas) hourTicks(s TimeScale, loc *time.Location, days float64) {
	stepH := 6
	if days <= 0.5 {
		stepH = 2
	}
	for t := s.Start.In(loc).Truncate(time.Hour); t.Before(s.End); t = t.Add(time.Hour) {
		if t.Before(s.Start) || t.In(loc).Hour()%stepH != 0 {
			continue
		}
		x := s.At(t)
		c.Line("axis", x, c.Area.Y1, x, c.Area.Y1+4)
		c.Text("tick", x, c.Area.Y1+16, Middle, t.In(loc).Format("15:04"))
	}
}
