package dev.localsqs.compat.spring;

import io.awspring.cloud.sqs.annotation.SqsListener;
import io.awspring.cloud.sqs.annotation.SqsListenerAcknowledgementMode;
import io.awspring.cloud.sqs.listener.SqsHeaders;
import io.awspring.cloud.sqs.listener.Visibility;
import io.awspring.cloud.sqs.listener.acknowledgement.Acknowledgement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.stereotype.Component;

/**
 * The application's {@code @SqsListener}s; each records what it was given so that {@link
 * SpringScenario} can check it. Queue names come from {@code app.prefix}.
 */
@Component
public class Listeners {

  /** Deliveries per queue (by suffix), in order: "body" or "group:body". */
  final Map<String, List<String>> deliveries = new ConcurrentHashMap<>();

  /** The headers of the last delivery to the orders queue. */
  volatile Map<String, Object> lastOrderHeaders = Map.of();

  private void record(String queue, String what) {
    deliveries.computeIfAbsent(queue, q -> new CopyOnWriteArrayList<>()).add(what);
  }

  List<String> deliveries(String queue) {
    return deliveries.getOrDefault(queue, List.of());
  }

  long count(String queue, String what) {
    return deliveries(queue).stream().filter(what::equals).count();
  }

  /**
   * Standard queue, acknowledgement ON_SUCCESS (the default): deleted when this returns, kept when
   * it throws; "fail-once" bodies throw on their first delivery.
   */
  @SqsListener("${app.prefix}orders")
  void onOrder(Message<String> message) {
    String body = message.getPayload();
    record("orders", body);
    lastOrderHeaders = Map.copyOf(message.getHeaders());
    if (body.startsWith("fail-once") && count("orders", body) == 1) {
      throw new IllegalStateException("first delivery of " + body + " fails (on purpose)");
    }
  }

  /** FIFO queue: records group and body in the order they arrive. */
  @SqsListener("${app.prefix}orders.fifo")
  void onFifo(
      String body,
      @Header(SqsHeaders.MessageSystemAttributes.SQS_MESSAGE_GROUP_ID_HEADER) String group) {
    record("orders.fifo", group + ":" + body);
  }

  /**
   * MANUAL acknowledgement: "ack-" bodies are acknowledged at once; "keep-" bodies only on their
   * second delivery, so the first comes back after the visibility timeout.
   */
  @SqsListener(
      value = "${app.prefix}manual",
      acknowledgementMode = SqsListenerAcknowledgementMode.MANUAL)
  void onManual(String body, Acknowledgement acknowledgement) {
    record("manual", body);
    if (body.startsWith("ack-") || count("manual", body) > 1) {
      acknowledgement.acknowledge();
    }
  }

  /**
   * Visibility extension: the first delivery raises its visibility timeout to 300 s with {@code
   * Visibility.changeTo} and is not acknowledged; the second is.
   */
  @SqsListener(
      value = "${app.prefix}slow",
      acknowledgementMode = SqsListenerAcknowledgementMode.MANUAL)
  void onSlow(String body, Visibility visibility, Acknowledgement acknowledgement) {
    record("slow", body);
    if (count("slow", body) == 1) {
      visibility.changeTo(300);
    } else {
      acknowledgement.acknowledge();
    }
  }

  /** Always fails: the queue's RedrivePolicy moves the message to the DLQ. */
  @SqsListener("${app.prefix}poison")
  void onPoison(String body) {
    record("poison", body);
    throw new IllegalStateException("poison message " + body + " fails (on purpose)");
  }
}
