// Shared helpers of the Go clients' scenario: checksums computed independently of the server,
// the step runner, and an http.RoundTripper that records every request to prove the protocol.
package main

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// attr is one message attribute, as the scenario describes it for both SDKs.
type attr struct {
	DataType    string
	StringValue string
	BinaryValue []byte // set for Binary types
}

func md5Hex(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// md5OfAttributes is MD5OfMessageAttributes: names sorted; each name, data type and value as a
// 4-byte big-endian length and its bytes, with a transport byte (1 string, 2 binary) before the
// value.
func md5OfAttributes(attrs map[string]attr) string {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	field := func(b []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		buf.Write(n[:])
		buf.Write(b)
	}
	for _, n := range names {
		a := attrs[n]
		field([]byte(n))
		field([]byte(a.DataType))
		if strings.HasPrefix(a.DataType, "Binary") {
			buf.WriteByte(2)
			field(a.BinaryValue)
		} else {
			buf.WriteByte(1)
			field([]byte(a.StringValue))
		}
	}
	return md5Hex(buf.Bytes())
}

func init() {
	// Vectors from the protocol reference (section 6.4), as in python/common.py.
	check := func(got, want string) {
		if got != want {
			panic(fmt.Sprintf("md5OfAttributes self-test: got %s want %s", got, want))
		}
	}
	check(md5OfAttributes(map[string]attr{"Foo": {DataType: "String", StringValue: "Bar"}}),
		"ae7155c6026991b6d54b11589678bf9c")
	check(md5OfAttributes(map[string]attr{"timestamp": {DataType: "Number.java.lang.Long",
		StringValue: "1493147359900"}}), "2e2e4876d8e0bd6b8c2c8f556831c349")
	check(md5OfAttributes(map[string]attr{"b": {DataType: "Binary",
		BinaryValue: []byte{0, 1, 2}}}), "0911ac989fa4a4b3440f074ba9941547")
}

// scenarioAttrs are the attributes every client sends: a non-ASCII String, a custom Number type
// and a Binary value with bytes that are not UTF-8.
var scenarioAttrs = map[string]attr{
	"color":     {DataType: "String", StringValue: "blue \u00e9\u6f22"},
	"timestamp": {DataType: "Number.java.lang.Long", StringValue: "1493147359900"},
	"blob":      {DataType: "Binary", BinaryValue: []byte{0x00, 0x01, 0xfe, 0xff, 0x80, '\n', 0x7f}},
}

// attrsEqual compares attributes as the scenario describes them (both SDKs' shapes reduce to it).
func attrsEqual(a, b map[string]attr) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.DataType != y.DataType || x.StringValue != y.StringValue ||
			string(x.BinaryValue) != string(y.BinaryValue) {
			return false
		}
	}
	return true
}

const scenarioBody = "hello <localsqs> & \"friends\" \u00e9"
const nonExistent = "AWS.SimpleQueueService.NonExistentQueue"

// --- assertions and steps -------------------------------------------------------------------

type failure struct{ msg string }

func fail(format string, args ...interface{}) { panic(failure{fmt.Sprintf(format, args...)}) }

func check(cond bool, format string, args ...interface{}) {
	if !cond {
		fail(format, args...)
	}
}

func must(err error, what string) {
	if err != nil {
		fail("%s: %T: %v", what, err, err)
	}
}

type runner struct {
	failures []string
	skips    []string
}

func (r *runner) step(title string, fn func()) {
	t0 := time.Now()
	ok := func() (ok bool) {
		defer func() {
			if e := recover(); e != nil {
				ok = false
				if f, isF := e.(failure); isF {
					fmt.Printf("  FAIL %-30s %s\n", title, f.msg)
				} else {
					fmt.Printf("  FAIL %-30s panic: %v\n", title, e)
				}
			}
		}()
		fn()
		return true
	}()
	if ok {
		fmt.Printf("  ok   %-30s (%.2fs)\n", title, time.Since(t0).Seconds())
	} else {
		r.failures = append(r.failures, title)
	}
}

// knownBug skips one check of a server bug that has been reported, loudly.
func (r *runner) knownBug(what string) {
	r.skips = append(r.skips, what)
	fmt.Printf("       KNOWN_BUG skip: %s\n", what)
}

// --- request recorder ------------------------------------------------------------------------

type recorded struct {
	method, url string
	header      http.Header
	body        []byte
}

type recorder struct {
	mu   sync.Mutex
	reqs []recorded
	next http.RoundTripper
}

func (rec *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body.Close()
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, recorded{req.Method, req.URL.String(), req.Header.Clone(), body})
	rec.mu.Unlock()
	return rec.next.RoundTrip(req)
}

var actionRe = regexp.MustCompile(`(?:^|&)Action=([A-Za-z]+)`)

func classify(r recorded) (kind, op string) {
	if t := r.header.Get("X-Amz-Target"); strings.HasPrefix(t, "AmazonSQS.") {
		return "json", strings.TrimPrefix(t, "AmazonSQS.")
	}
	if m := actionRe.FindStringSubmatch(string(r.body)); m != nil {
		return "query", m[1]
	}
	if strings.Contains(r.url, "Action=") {
		return "query", "?"
	}
	return "unknown", "?"
}

func (rec *recorder) check(name, want string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	check(len(rec.reqs) > 0, "no request was captured")
	first := rec.reqs[0]
	kind, _ := classify(first)
	body := string(first.body)
	if len(body) > 80 {
		body = body[:80]
	}
	detail := fmt.Sprintf("Content-Type: %s; body=%s", first.header.Get("Content-Type"), body)
	if kind == "json" {
		detail = fmt.Sprintf("X-Amz-Target: %s; %s", first.header.Get("X-Amz-Target"), detail)
	}
	fmt.Printf("EVIDENCE %s: %s %s -> %s (%s)\n", name, first.method, first.url,
		strings.ToUpper(kind), detail)
	kinds := map[string]int{}
	ops := map[string]bool{}
	for _, r := range rec.reqs {
		k, op := classify(r)
		kinds[k]++
		ops[op] = true
	}
	check(len(kinds) == 1 && kinds[want] == len(rec.reqs),
		"expected every request to use %s, saw %v", want, kinds)
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	fmt.Printf("       %d requests, all %s; operations: %s\n", len(rec.reqs),
		strings.ToUpper(want), strings.Join(names, " "))
}
