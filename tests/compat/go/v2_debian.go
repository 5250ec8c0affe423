//go:build !modproxy

// The v2 client as Debian's aws-sdk-go-v2 (service/sqs 1.19.12) builds it: that release has no
// BaseEndpoint option, so the endpoint comes from EndpointResolverFromURL.
package main

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// v2SqsModuleVersion: service/sqs go_module_metadata.go in the Debian package (a GOPATH build
// records no module versions).
func v2SqsModuleVersion() string { return "1.19.12" }

func newV2Client(endpoint string, httpClient *http.Client) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		EndpointResolver: sqs.EndpointResolverFromURL(endpoint),
		HTTPClient:       httpClient,
		Retryer:          aws.NopRetryer{},
	})
}
