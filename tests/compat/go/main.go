// The compatibility scenario for the AWS SDK for Go, v1 (github.com/aws/aws-sdk-go) and v2
// (github.com/aws/aws-sdk-go-v2), as Debian packages them. Built by tests/compat/run.sh in
// GOPATH mode against /usr/share/gocode (no module proxy), and run as
//
//	localsqs-compat-go -sdk v1 -endpoint http://127.0.0.1:PORT -name go-v1
//	localsqs-compat-go -sdk v2 -endpoint http://127.0.0.1:PORT -name go-v2
//
// Both SDK versions as packaged speak the AWS Query protocol to SQS; every request is recorded
// by an http.RoundTripper and the run fails if any used another protocol. Exit status 0 means
// every step passed.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
)

func main() {
	endpoint := flag.String("endpoint", "", "server URL")
	sdk := flag.String("sdk", "v1", "v1 or v2")
	name := flag.String("name", "", "client name (queue prefix, evidence line)")
	protocol := flag.String("protocol", "query", "protocol every request must use")
	flag.Parse()
	if *endpoint == "" || *name == "" {
		fmt.Fprintln(os.Stderr, "usage: -endpoint URL -name NAME [-sdk v1|v2]")
		os.Exit(2)
	}
	rec := &recorder{next: http.DefaultTransport}
	httpClient := &http.Client{Transport: rec}
	prefix := fmt.Sprintf("compat-%s-%d", *name, os.Getpid())
	r := &runner{}
	var steps []namedStep
	switch *sdk {
	case "v1":
		steps = newV1(*endpoint, prefix, httpClient, r).steps()
	case "v2":
		steps = newV2(*endpoint, prefix, httpClient, r).steps()
	default:
		fmt.Fprintln(os.Stderr, "unknown -sdk", *sdk)
		os.Exit(2)
	}
	fmt.Printf("%s: %s, protocol expected %s\n", *name, sdkVersion(*sdk), strings.ToUpper(*protocol))
	for i, s := range steps {
		if i > 0 && len(r.failures) > 0 && r.failures[0] == steps[0].title {
			break // nothing to run against without the queues
		}
		r.step(s.title, s.fn)
	}
	r.step("protocol evidence", func() { rec.check(*name, *protocol) })
	if len(r.skips) > 0 {
		fmt.Printf("       %d KNOWN_BUG skip(s): %s\n", len(r.skips), strings.Join(r.skips, "; "))
	}
	if len(r.failures) > 0 {
		os.Exit(1)
	}
}

type namedStep struct {
	title string
	fn    func()
}

func sdkVersion(sdk string) string {
	if sdk == "v1" {
		return v1Version()
	}
	return v2Version()
}
