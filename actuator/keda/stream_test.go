package keda_test

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	pb "github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/keda"
)

// TestStreamIsActiveEndsOnDisconnect checks that a StreamIsActive handler
// returns as soon as its client goes away (no goroutine left waiting for a
// plan change), and that stopping the server ends streams still open.
func TestStreamIsActiveEndsOnDisconnect(t *testing.T) {
	s := keda.New(keda.Options{Now: actuatortest.NewClock(t0).Now, Logger: slog.New(slog.DiscardHandler)})
	if err := s.SetDesired(context.Background(), "sd-pool", 3, "test"); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 4)
	track := grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		err := h(srv, ss)
		ended <- err
		return err
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srvCtx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(srvCtx, lis, track) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewExternalScalerClient(conn)

	open := func() context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		stream, err := c.StreamIsActive(ctx, ref("sd-pool"))
		if err != nil {
			t.Fatal(err)
		}
		if r, err := stream.Recv(); err != nil || !r.Result {
			t.Fatalf("first push = %v, %v; want active", r, err)
		}
		return cancel
	}
	wait := func(what string) {
		t.Helper()
		select {
		case err := <-ended:
			if err != nil {
				t.Errorf("%s: handler returned %v, want nil", what, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the StreamIsActive handler is still running", what)
		}
	}

	cancel := open()
	cancel() // KEDA drops the stream (ScaledObject deleted, operator restart)
	wait("client cancelled")

	_ = open() // left open: the server's stop must end it
	stop()
	wait("server stopped")
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// TestServeAgainAfterStop checks that a scaler whose server was stopped
// serves streams normally when served again (a listener restart): streams
// keep receiving pushes instead of ending at once.
func TestServeAgainAfterStop(t *testing.T) {
	s := keda.New(keda.Options{Now: actuatortest.NewClock(t0).Now, Logger: slog.New(slog.DiscardHandler)})
	if err := s.SetDesired(context.Background(), "sd-pool", 0, "night"); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- s.Serve(ctx, lis) }()
		conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		callCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		stream, err := pb.NewExternalScalerClient(conn).StreamIsActive(callCtx, ref("sd-pool"))
		if err != nil {
			t.Fatal(err)
		}
		want := round%2 == 1 // the plan in force alternates 0, 5
		if r, err := stream.Recv(); err != nil || r.Result != want {
			t.Fatalf("round %d: first push = %v, %v; want %v", round, r, err, want)
		}
		next := 5
		if want {
			next = 0
		}
		if err := s.SetDesired(context.Background(), "sd-pool", next, "change"); err != nil {
			t.Fatal(err)
		}
		if r, err := stream.Recv(); err != nil || r.Result == want {
			t.Fatalf("round %d: push after the change = %v, %v; want %v", round, r, err, !want)
		}
		cancel()
		conn.Close()
		stop()
		if err := <-served; err != nil {
			t.Errorf("round %d: Serve: %v", round, err)
		}
	}
}
