package embedded

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// seriesIndex is the in-memory index of every series in the file: per
// measurement, each series' id and decoded tags, and for each tag key and
// value the series that carry it (a posting list, as in Prometheus' TSDB
// head). A query then picks its series from the shortest posting list of
// its matchers instead of decoding every series key of the measurement,
// which grew with pools × series: with 1,000 pools every query decoded
// 1,000 JSON keys.
//
// The file is opened by one process at a time (bbolt's lock), so the index
// is built once at Open and kept in step by Write and the retention sweep
// after each commit. A query that runs while a new series commits may miss
// that series' first points, as it would had it started a moment earlier.
type seriesIndex struct {
	mu sync.RWMutex
	m  map[string]*measurementIndex
	n  int // series indexed, over every measurement
}

// len is how many series the index holds.
func (ix *seriesIndex) len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.n
}

// measurementIndex indexes the series of one measurement.
type measurementIndex struct {
	all      []*indexedSeries                       // sorted by canonical tags
	postings map[string]map[string][]*indexedSeries // tag key → value → series, sorted by canonical tags
}

// indexedSeries is one series as a query returns it. tags is shared by
// every query result and must not be modified.
type indexedSeries struct {
	canon string
	id    uint64
	tags  map[string]string
}

func newSeriesIndex() *seriesIndex { return &seriesIndex{m: map[string]*measurementIndex{}} }

// load builds the index from the file's series buckets.
func (ix *seriesIndex) load(tx *bolt.Tx) error {
	return tx.Bucket(bucketMeasurements).ForEachBucket(func(name []byte) error {
		series := tx.Bucket(bucketMeasurements).Bucket(name).Bucket(bucketSeries)
		if series == nil {
			return nil
		}
		return series.ForEach(func(k, v []byte) error {
			return ix.add(string(name), string(k), decodeID(v))
		})
	})
}

// add indexes a series (a no-op when it is indexed already).
func (ix *seriesIndex) add(measurement, canon string, id uint64) error {
	var tags map[string]string
	if err := json.Unmarshal([]byte(canon), &tags); err != nil {
		return fmt.Errorf("corrupt series key %q of measurement %q: %w", canon, measurement, err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	mi := ix.m[measurement]
	if mi == nil {
		mi = &measurementIndex{postings: map[string]map[string][]*indexedSeries{}}
		ix.m[measurement] = mi
	}
	s := &indexedSeries{canon: canon, id: id, tags: tags}
	var found bool
	if mi.all, found = insertSorted(mi.all, s); found {
		return nil
	}
	ix.n++
	for k, v := range tags {
		byValue := mi.postings[k]
		if byValue == nil {
			byValue = map[string][]*indexedSeries{}
			mi.postings[k] = byValue
		}
		byValue[v], _ = insertSorted(byValue[v], s)
	}
	return nil
}

// remove drops a series from the index.
func (ix *seriesIndex) remove(measurement, canon string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	mi := ix.m[measurement]
	if mi == nil {
		return
	}
	i, found := slices.BinarySearchFunc(mi.all, canon, byCanon)
	if !found {
		return
	}
	s := mi.all[i]
	mi.all = slices.Delete(mi.all, i, i+1)
	ix.n--
	for k, v := range s.tags {
		list := mi.postings[k][v]
		if j, ok := slices.BinarySearchFunc(list, canon, byCanon); ok {
			list = slices.Delete(list, j, j+1)
		}
		if len(list) == 0 {
			delete(mi.postings[k], v)
		} else {
			mi.postings[k][v] = list
		}
	}
	if len(mi.all) == 0 {
		delete(ix.m, measurement)
	}
}

// match returns the series of measurement whose tags include every pair of
// match, in canonical order.
func (ix *seriesIndex) match(measurement string, match map[string]string) []seriesRef {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mi := ix.m[measurement]
	if mi == nil {
		return nil
	}
	candidates := mi.all
	for k, v := range match {
		list := mi.postings[k][v]
		if len(list) < len(candidates) {
			candidates = list
		}
		if len(list) == 0 {
			return nil
		}
	}
	var refs []seriesRef
	for _, s := range candidates {
		if hasAll(s.tags, match) {
			refs = append(refs, seriesRef{id: s.id, tags: s.tags})
		}
	}
	return refs
}

func hasAll(tags, match map[string]string) bool {
	for k, v := range match {
		if tags[k] != v {
			return false
		}
	}
	return true
}

func byCanon(s *indexedSeries, canon string) int { return strings.Compare(s.canon, canon) }

// insertSorted inserts s into list (sorted by canonical tags) unless a
// series with its tags is there; found reports that.
func insertSorted(list []*indexedSeries, s *indexedSeries) ([]*indexedSeries, bool) {
	i, found := slices.BinarySearchFunc(list, s.canon, byCanon)
	if found {
		return list, true
	}
	return slices.Insert(list, i, s), false
}
