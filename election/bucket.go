package election

import (
	"fmt"
	"hash/fnv"
)

// Bucket maps a pool onto one of buckets buckets with 32-bit FNV-1a, which
// every replica and every release computes alike. It returns 0 when buckets
// is below 1.
func Bucket(pool string, buckets int) int {
	if buckets < 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(pool))
	return int(h.Sum32() % uint32(buckets))
}

// bucketName is the name of a bucket's Lease or ConfigMap: prefix-07.
func bucketName(prefix string, bucket int) string {
	return fmt.Sprintf("%s-%02d", prefix, bucket)
}
