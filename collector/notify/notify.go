package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/collector/alert"
	"github.com/prewarm/prewarm/internal/backoff"
	"github.com/prewarm/prewarm/redact"
)

// Formats a Webhook can send.
const (
	FormatJSON     = "json"
	FormatWeCom    = "wecom"
	FormatDingTalk = "dingtalk"
)

// Webhook posts events to one URL.
type Webhook struct {
	// Name labels the webhook in logs and metrics; it defaults to the
	// format.
	Name string
	// URL receives a POST per event. For robots it holds the robot's key or
	// access_token query parameter, so it is never logged whole.
	URL string
	// Format is FormatJSON, FormatWeCom or FormatDingTalk.
	Format string
	// Token, if set, is sent as "Authorization: Bearer <token>".
	Token string
	// Secret, if set for DingTalk, signs each request (timestamp and sign
	// query parameters, HMAC-SHA256) as robots with "加签" require.
	Secret string
	// Kinds limits the events sent (e.g. only "idle" to the release
	// endpoint); empty sends all.
	Kinds []string
	// Client is the HTTP client; nil means one with a 5 s timeout.
	Client *http.Client
	// Now is the clock for DingTalk signatures; nil means time.Now.
	Now func() time.Time
	// Redactor, if set, removes secrets (the collector's: InfluxDB token,
	// other webhooks' tokens) from the payloads sent and from errors. The
	// webhook's own Token, Secret and URL secrets are always removed.
	Redactor *redact.Redactor

	once sync.Once
	own  *redact.Redactor // the webhook's own Secrets
}

// secretParams are the URL query parameters that carry credentials in
// webhook URLs: WeCom's key, DingTalk's access_token, and the usual names.
var secretParams = []string{"access_token", "key", "token", "secret", "sign", "signature", "password", "apikey", "api_key"}

// Secrets returns the credentials the webhook holds: its bearer token, its
// signing secret, the password of its URL and the values of the URL's
// credential parameters (access_token, key, ...). They never appear in
// what it sends or returns.
func (w *Webhook) Secrets() []string {
	out := []string{w.Token, w.Secret}
	u, err := url.Parse(w.URL)
	if err != nil {
		return out
	}
	if p, ok := u.User.Password(); ok {
		out = append(out, p)
	}
	q := u.Query()
	for _, name := range secretParams {
		out = append(out, q[name]...)
	}
	return out
}

// clean removes the webhook's own Secrets and Redactor's from b.
func (w *Webhook) clean(b []byte) []byte {
	w.once.Do(func() { w.own = redact.New(w.Secrets()...) })
	return w.Redactor.Bytes(w.own.Bytes(b))
}

// cleanError is clean for an error's message; the error still unwraps to
// err.
func (w *Webhook) cleanError(err error) error {
	if err == nil {
		return nil
	}
	w.once.Do(func() { w.own = redact.New(w.Secrets()...) })
	return w.Redactor.Error(w.own.Error(err))
}

// ErrRefused marks a delivery the receiver refused for good (an HTTP 4xx
// other than 408 and 429: bad token, instance outside the allowed pools):
// it is not retried, so it cannot hold up the events queued behind it.
var ErrRefused = errors.New("refused by the receiver")

// Validate checks the webhook's settings.
func (w *Webhook) Validate() error {
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook %s: url is not an http(s) URL", w.name())
	}
	switch w.Format {
	case FormatJSON, FormatWeCom, FormatDingTalk:
	default:
		return fmt.Errorf("webhook %s: format %q is not json, wecom or dingtalk", w.name(), w.Format)
	}
	for _, k := range w.Kinds {
		if k != alert.KindAlert && k != alert.KindResolved && k != alert.KindIdle {
			return fmt.Errorf("webhook %s: kind %q is not alert, resolved or idle", w.name(), k)
		}
	}
	return nil
}

func (w *Webhook) name() string {
	if w.Name != "" {
		return w.Name
	}
	if w.Format != "" {
		return w.Format
	}
	return "webhook"
}

// Wants reports whether the webhook takes events of this kind.
func (w *Webhook) Wants(kind string) bool {
	return len(w.Kinds) == 0 || slices.Contains(w.Kinds, kind)
}

// robotText is the body of WeCom and DingTalk text messages.
type robotText struct {
	MsgType string `json:"msgtype"`
	Text    struct {
		Content string `json:"content"`
	} `json:"text"`
}

// Body renders the event in the webhook's format.
func (w *Webhook) Body(e alert.Event) ([]byte, error) {
	if w.Format == FormatJSON {
		return json.Marshal(e)
	}
	var m robotText
	m.MsgType = "text"
	m.Text.Content = Text(e)
	return json.Marshal(m)
}

// Text is the human-readable line robots post.
func Text(e alert.Event) string {
	title := map[string]string{alert.KindAlert: "[ALERT]", alert.KindResolved: "[RESOLVED]", alert.KindIdle: "[IDLE]"}[e.Kind]
	s := fmt.Sprintf("%s prewarm %s: %s", title, e.Rule, e.Reason)
	if e.Pool != "" {
		s += "\npool: " + e.Pool
	}
	if e.InstanceID != "" {
		s += "\ninstance: " + e.InstanceID
	}
	s += "\nsince: " + e.Since.Format(time.RFC3339)
	return s
}

// Post sends one event. Robot replies carrying a non-zero errcode are
// errors even with HTTP 200. Neither the payload nor the error holds a
// secret (see Redactor), even when the receiver echoes the request.
func (w *Webhook) Post(ctx context.Context, e alert.Event) error {
	return w.cleanError(w.post(ctx, e))
}

func (w *Webhook) post(ctx context.Context, e alert.Event) error {
	body, err := w.Body(e)
	if err != nil {
		return err
	}
	body = w.clean(body)
	target := w.URL
	if w.Format == FormatDingTalk && w.Secret != "" {
		target = w.signedURL()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: bad request", w.name())
	}
	req.Header.Set("Content-Type", "application/json")
	if w.Token != "" {
		req.Header.Set("Authorization", "Bearer "+w.Token)
	}
	client := w.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		// url.Error includes the URL, which may hold a robot key: strip it.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("webhook %s: %w", w.name(), err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return w.checkReply(resp.StatusCode, resp.Status, reply)
}

// maxQuoted bounds how much of a receiver's reply an error quotes.
const maxQuoted = 200

// checkReply turns a receiver's answer into Post's result: a non-2xx
// status is an error (ErrRefused for a 4xx other than 408 and 429), and so
// is a robot's JSON reply with a non-zero errcode. The reply is redacted
// before it is cut short, so no cut leaves the start of a secret.
func (w *Webhook) checkReply(code int, status string, reply []byte) error {
	quote := func(b []byte) string {
		b = bytes.TrimSpace(w.clean(b))
		if len(b) > maxQuoted {
			return strings.ToValidUTF8(string(b[:maxQuoted]), "") + "..."
		}
		return string(b)
	}
	if code/100 != 2 {
		if status == "" {
			status = strconv.Itoa(code)
		}
		err := fmt.Errorf("webhook %s: HTTP %s: %s", w.name(), status, quote(reply))
		if code/100 == 4 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests {
			return fmt.Errorf("%w: %w", ErrRefused, err)
		}
		return err
	}
	if w.Format != FormatJSON {
		var r struct {
			ErrCode int    `json:"errcode"`
			ErrMsg  string `json:"errmsg"`
		}
		if json.Unmarshal(reply, &r) == nil && r.ErrCode != 0 {
			return fmt.Errorf("webhook %s: robot refused the message: errcode %d %s", w.name(), r.ErrCode, quote([]byte(r.ErrMsg)))
		}
	}
	return nil
}

// signedURL adds DingTalk's timestamp and sign parameters:
// sign = base64(HMAC-SHA256(secret, timestamp + "\n" + secret)).
func (w *Webhook) signedURL() string {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	ts := strconv.FormatInt(now().UnixMilli(), 10)
	mac := hmac.New(sha256.New, []byte(w.Secret))
	mac.Write([]byte(ts + "\n" + w.Secret))
	sign := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	u, _ := url.Parse(w.URL)
	q := u.Query()
	q.Set("timestamp", ts)
	q.Set("sign", sign)
	u.RawQuery = q.Encode()
	return u.String()
}

// Dispatcher queues events for the log and the webhooks; it implements
// alert.Sink.
type Dispatcher struct {
	webhooks []*Webhook
	log      *slog.Logger
	queue    chan alert.Event
	retries  int
	delays   backoff.Policy
	sent     *prometheus.CounterVec
	failed   *prometheus.CounterVec
	dropped  prometheus.Counter
	pending  atomic.Int64 // queued or being delivered
	wg       sync.WaitGroup
	stop     context.CancelFunc
	ctx      context.Context
}

// DispatcherOptions tune a Dispatcher; zero values take the defaults.
type DispatcherOptions struct {
	// QueueSize bounds waiting events (default 1000); beyond, events are
	// dropped and counted.
	QueueSize int
	// Retries per webhook and event (default 3) with Backoff doubling from
	// 500ms.
	Retries int
	Backoff time.Duration
	// Registerer, if set, gets the delivery metrics.
	Registerer prometheus.Registerer
}

// NewDispatcher validates the webhooks and starts the sending goroutine;
// call Close to stop it.
func NewDispatcher(log *slog.Logger, webhooks []*Webhook, opts DispatcherOptions) (*Dispatcher, error) {
	for _, w := range webhooks {
		if err := w.Validate(); err != nil {
			return nil, err
		}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1000
	}
	if opts.Retries <= 0 {
		opts.Retries = 3
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	d := &Dispatcher{webhooks: webhooks, log: log, queue: make(chan alert.Event, opts.QueueSize),
		retries: opts.Retries, delays: backoff.Policy{Base: opts.Backoff},
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "prewarm_collector_webhook_sent_total",
			Help: "Events delivered, by webhook."}, []string{"webhook"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "prewarm_collector_webhook_failed_total",
			Help: "Events a webhook did not accept after all retries."}, []string{"webhook"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "prewarm_collector_events_dropped_total",
			Help: "Events dropped because the delivery queue was full."}),
	}
	if opts.Registerer != nil {
		for _, c := range []prometheus.Collector{d.sent, d.failed, d.dropped} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, err
			}
		}
	}
	d.ctx, d.stop = context.WithCancel(context.Background())
	d.wg.Add(1)
	go d.loop()
	return d, nil
}

// Send logs the event and queues it for the webhooks; it never blocks.
func (d *Dispatcher) Send(e alert.Event) {
	level := slog.LevelWarn
	if e.Kind == alert.KindResolved {
		level = slog.LevelInfo
	}
	d.log.Log(context.Background(), level, "alert event", "kind", e.Kind, "rule", e.Rule, "pool", e.Pool,
		"service", e.Service, "host", e.Host, "gpu", e.GPU, "uuid", e.UUID, "instance_id", e.InstanceID,
		"since", e.Since.Format(time.RFC3339), "reason", e.Reason)
	if len(d.webhooks) == 0 {
		return
	}
	d.pending.Add(1)
	select {
	case d.queue <- e:
	default:
		d.pending.Add(-1)
		d.dropped.Inc()
		d.log.Error("event queue full; event not sent to webhooks", "kind", e.Kind, "rule", e.Rule)
	}
}

func (d *Dispatcher) loop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.ctx.Done():
			return
		case e := <-d.queue:
			for _, w := range d.webhooks {
				if w.Wants(e.Kind) {
					d.deliver(w, e)
				}
			}
			d.pending.Add(-1)
		}
	}
}

func (d *Dispatcher) deliver(w *Webhook, e alert.Event) {
	var err error
	for attempt := 1; attempt <= d.retries; attempt++ {
		if err = w.Post(d.ctx, e); err == nil {
			d.sent.WithLabelValues(w.name()).Inc()
			return
		}
		if errors.Is(err, ErrRefused) {
			break // the receiver said no; asking again would not change its mind
		}
		if attempt < d.retries && backoff.Sleep(d.ctx, d.delays.Delay(attempt)) != nil {
			return
		}
	}
	d.failed.WithLabelValues(w.name()).Inc()
	d.log.Error("webhook did not accept the event", "webhook", w.name(), "kind", e.Kind, "rule", e.Rule, "err", err)
}

// Close stops delivery after the events already queued are sent or time
// out with ctx.
func (d *Dispatcher) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		for d.pending.Load() > 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		d.stop()
		d.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		d.stop()
		return ctx.Err()
	}
}
