package election

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// ErrConflict is in the chain of a Put whose version is no longer the
// stored one: another write came first, or the state was deleted. Read
// again, merge and retry.
var ErrConflict = errors.New("shard state changed since it was read")

// ErrTooLarge is in the chain of a Put of more state than a ConfigMap holds.
var ErrTooLarge = errors.New("shard state too large for a ConfigMap")

// stateKey is the binaryData key that holds a shard's state.
const stateKey = "state"

// MaxStateBytes is the most state one shard keeps: the API server refuses a
// ConfigMap whose keys and values add up to more than 1 MiB.
const MaxStateBytes = 1<<20 - len(stateKey)

// Store keeps each shard's state in a ConfigMap (prefix-state-07 for bucket
// 7), written with its resourceVersion as compare-and-swap, so that a
// replica taking a bucket over carries on from the last state and a replica
// that lost it cannot overwrite a newer one.
type Store struct {
	maps   corev1client.ConfigMapInterface
	prefix string
}

// NewStore keeps shard state in namespace, in ConfigMaps named after prefix
// (election.shard_prefix).
func NewStore(maps corev1client.ConfigMapsGetter, namespace, prefix string) (*Store, error) {
	if maps == nil {
		return nil, errNoClient
	}
	if err := validName("election.namespace", namespace, validation.IsDNS1123Label); err != nil {
		return nil, err
	}
	if err := validName("election.shard_prefix", stateName(prefix, 0), validation.IsDNS1123Subdomain); err != nil {
		return nil, err
	}
	return &Store{maps: maps.ConfigMaps(namespace), prefix: prefix}, nil
}

// stateName is the ConfigMap of a shard.
func stateName(prefix string, shard int) string {
	return bucketName(prefix+"-state", shard)
}

// Get returns a shard's state and the version to hand to Put; a shard with
// no state yet returns nil data and version "".
func (s *Store) Get(ctx context.Context, shard int) (data []byte, version string, err error) {
	cm, err := s.maps.Get(ctx, stateName(s.prefix, shard), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("election: reading the state of shard %d: %w", shard, err)
	}
	return cm.BinaryData[stateKey], cm.ResourceVersion, nil
}

// Put writes a shard's state if version is still the stored one ("" for a
// shard that has none yet); otherwise it fails with ErrConflict and writes
// nothing.
func (s *Store) Put(ctx context.Context, shard int, data []byte, version string) error {
	if len(data) > MaxStateBytes {
		return fmt.Errorf("election: state of shard %d is %d bytes, over the %d a ConfigMap holds: %w",
			shard, len(data), MaxStateBytes, ErrTooLarge)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: stateName(s.prefix, shard), ResourceVersion: version},
		BinaryData: map[string][]byte{stateKey: data},
	}
	var err error
	if version == "" {
		_, err = s.maps.Create(ctx, cm, metav1.CreateOptions{})
	} else {
		_, err = s.maps.Update(ctx, cm, metav1.UpdateOptions{})
	}
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err), apierrors.IsNotFound(err):
		return fmt.Errorf("election: writing the state of shard %d at version %q: %w", shard, version, ErrConflict)
	}
	return fmt.Errorf("election: writing the state of shard %d: %w", shard, err)
}
