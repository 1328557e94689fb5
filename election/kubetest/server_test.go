package kubetest

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clientset drives a fresh stand-in with client-go's own typed clientset.
func clientset(t *testing.T) (*Server, kubernetes.Interface) {
	t.Helper()
	srv := NewServer()
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return srv, cs
}

func TestLeaseVerbsAsClientGoExpects(t *testing.T) {
	srv, cs := clientset(t)
	ctx := context.Background()
	leases := cs.CoordinationV1().Leases("ns")

	_, err := leases.Get(ctx, "a", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get of a missing lease: %v, want NotFound", err)
	}
	holder := "one"
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"group": "g"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
	created, err := leases.Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.ResourceVersion == "" || created.UID == "" || created.Namespace != "ns" {
		t.Fatalf("created lease lacks server fields: %+v", created.ObjectMeta)
	}
	if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v, want AlreadyExists", err)
	}
	other := "two"
	created.Spec.HolderIdentity = &other
	updated, err := leases.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == created.ResourceVersion || updated.UID != created.UID {
		t.Fatalf("update kept version %s or changed uid %s", updated.ResourceVersion, updated.UID)
	}
	if _, err := leases.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion: %v, want Conflict", err)
	}
	missing := created.DeepCopy()
	missing.Name = "b"
	if _, err := leases.Update(ctx, missing, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("update of a missing lease: %v, want NotFound", err)
	}
	got, err := leases.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || *got.Spec.HolderIdentity != "two" {
		t.Fatalf("get after update: %v, %+v", err, got)
	}
	assertList(t, cs, "group=g", 1)
	assertList(t, cs, "group=h", 0)
	want := map[string]int{VerbGet: 2, VerbCreate: 2, VerbUpdate: 3, VerbList: 2}
	for verb, n := range want {
		if got := srv.Requests()[verb]; got != n {
			t.Errorf("%s requests = %d, want %d", verb, got, n)
		}
	}
}

// assertList checks how many leases of namespace ns a label selector lists.
func assertList(t *testing.T, cs kubernetes.Interface, selector string, want int) {
	t.Helper()
	list, err := cs.CoordinationV1().Leases("ns").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != want {
		t.Fatalf("list %q: %d leases, want %d", selector, len(list.Items), want)
	}
}

func TestConfigMapVersionsAndNamespaces(t *testing.T) {
	_, cs := clientset(t)
	ctx := context.Background()
	maps := cs.CoreV1().ConfigMaps("ns")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, BinaryData: map[string][]byte{"k": {0, 1, 2}}}
	created, err := maps.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("elsewhere").Get(ctx, "c", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get from another namespace: %v, want NotFound", err)
	}
	first := created.DeepCopy()
	created.BinaryData["k"] = []byte{3}
	if _, err := maps.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := maps.Update(ctx, first, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update with the first version: %v, want Conflict", err)
	}
	got, err := maps.Get(ctx, "c", metav1.GetOptions{})
	if err != nil || string(got.BinaryData["k"]) != "\x03" {
		t.Fatalf("get: %v, %v", err, got.BinaryData)
	}
}

func TestFaultFailsChosenRequests(t *testing.T) {
	srv, cs := clientset(t)
	ctx := context.Background()
	srv.SetFault(func(verb, resource, name string, body []byte) bool {
		return verb == VerbGet && resource == "configmaps"
	})
	_, err := cs.CoreV1().ConfigMaps("ns").Get(ctx, "c", metav1.GetOptions{})
	if !apierrors.IsInternalError(err) {
		t.Fatalf("faulted get: %v, want InternalError", err)
	}
	if _, err := cs.CoordinationV1().Leases("ns").Get(ctx, "c", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("unfaulted get: %v, want NotFound", err)
	}
	srv.SetFault(nil)
	if _, err := cs.CoreV1().ConfigMaps("ns").Get(ctx, "c", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after the fault is lifted: %v, want NotFound", err)
	}
}

func TestDeleteHonoursItsPrecondition(t *testing.T) {
	_, cs := clientset(t)
	ctx := context.Background()
	leases := cs.CoordinationV1().Leases("ns")
	created, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := "0"
	err = leases.Delete(ctx, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("delete with a stale precondition: %v, want Conflict", err)
	}
	err = leases.Delete(ctx, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &created.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	if err := leases.Delete(ctx, "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: %v, want NotFound", err)
	}
	if _, err := leases.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}
}

func TestUnservedPathsAreNotFound(t *testing.T) {
	_, cs := clientset(t)
	_, err := cs.CoreV1().Secrets("ns").Get(context.Background(), "s", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("secret get: %v, want NotFound", err)
	}
}
