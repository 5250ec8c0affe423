package dev.localsqs.junit;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The clients this helper makes keep the SDK's MD5 validation on: the same builder pointed at a
 * fake server that answers SendMessage with a wrong MD5OfMessageBody must fail.
 */
class ChecksumValidationTest {

  @Test
  void aWrongBodyMd5IsRejected() throws IOException {
    HttpServer fake = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    fake.createContext(
        "/",
        exchange -> {
          byte[] body =
              ("{\"MessageId\":\"5fea7756-0ea4-451a-a703-a558b933e274\","
                      + "\"MD5OfMessageBody\":\"00000000000000000000000000000000\"}")
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.0");
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    fake.start();
    try (LocalSqsServer server = LocalSqsServer.start();
        SqsClient client =
            server
                .clientBuilder()
                .endpointOverride(URI.create("http://127.0.0.1:" + fake.getAddress().getPort()))
                .build()) {
      SdkClientException e =
          assertThrows(
              SdkClientException.class,
              () -> client.sendMessage(b -> b.queueUrl(server.queueUrl("q")).messageBody("hi")));
      assertTrue(e.getMessage().contains("MD5"), e.getMessage());
    } finally {
      fake.stop(0);
    }
  }
}
