package seasonal

// partialSort reorders a so that a[k−1] holds its k-th smallest value for
// each 1-based k in ind, as the Fortran psort that R's stl calls does
// (Singleton's quicksort, CACM algorithm 347, stopped early). It is kept
// step for step, quirks included: psort expects ind in increasing order,
// and R's stl passes the two middle ranks of an even-length series in
// decreasing order, so in later robustness iterations its "median" can be
// an order statistic or so off. Reproducing that keeps robust STL equal to
// R's to rounding (TestSTLMatchesR).
func partialSort(a []float64, ind []int) {
	n, ni := len(a), len(ind)
	if n < 2 || ni == 0 {
		return
	}
	// 1-based views of the Fortran arrays.
	at := func(i int) float64 { return a[i-1] }
	set := func(i int, v float64) { a[i-1] = v }
	var indu, indl, iu, il [16]int
	var p, jl, ju, i, j, m, k, ij, l int
	var t, tt float64
	jl, ju = 1, ni
	indl[0], indu[0] = 1, ni
	i, j, m = 1, n, 1

outer:
	if i < j {
		goto partition
	}
pop:
	m--
	if m == 0 {
		return
	}
	i, j, jl, ju = il[m-1], iu[m-1], indl[m-1], indu[m-1]
	if !(jl <= ju) {
		goto pop
	}
loop:
	if !(j-i > 10) {
		goto insertion
	}
partition:
	k = i
	ij = (i + j) / 2
	t = at(ij)
	if at(i) > t {
		set(ij, at(i))
		set(i, t)
		t = at(ij)
	}
	l = j
	if at(j) < t {
		set(ij, at(j))
		set(j, t)
		t = at(ij)
		if at(i) > t {
			set(ij, at(i))
			set(i, t)
			t = at(ij)
		}
	}
scanLeft:
	l--
	if !(at(l) <= t) {
		goto scanLeft
	}
	tt = at(l)
scanRight:
	k++
	if !(at(k) >= t) {
		goto scanRight
	}
	if k > l {
		goto split
	}
	set(l, at(k))
	set(k, tt)
	goto scanLeft
split:
	indl[m-1], indu[m-1] = jl, ju
	p = m
	m++
	if l-i <= j-k {
		il[p-1], iu[p-1] = k, j
		j = l
		goto trimHigh
	}
	il[p-1], iu[p-1] = i, l
	i = k
	goto trimLow
trimHigh:
	if jl > ju {
		goto pop
	}
	if ind[ju-1] > j {
		ju--
		goto trimHigh
	}
	indl[p-1] = ju + 1
	goto loop
trimLow:
	if jl > ju {
		goto pop
	}
	if ind[jl-1] < i {
		jl++
		goto trimLow
	}
	indu[p-1] = jl - 1
	goto loop
insertion:
	if i == 1 {
		goto outer
	}
	i--
insertNext:
	i++
	if i == j {
		goto pop
	}
	t = at(i + 1)
	if !(at(i) > t) {
		goto insertNext
	}
	k = i
shift:
	set(k+1, at(k))
	k--
	if !(t >= at(k)) {
		goto shift
	}
	set(k+1, t)
	goto insertNext
}
