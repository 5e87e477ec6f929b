package io.relgraph.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A fake server that plays a script: for each step it reads one request frame, requires it to
 * be byte for byte the expected one, and writes the step's reply frames. One connection per
 * session, sessions in order.
 */
final class ScriptedServer implements AutoCloseable {
  record Step(String what, byte[] request, List<byte[]> replies, boolean closeAfter) {
    static Step of(String what, byte[] request, byte[]... replies) {
      return new Step(what, request, List.of(replies), false);
    }
  }

  private final ServerSocket listener;
  private final Thread thread;
  final List<String> mismatches = new CopyOnWriteArrayList<>();
  volatile int stepsDone;

  ScriptedServer(List<List<Step>> sessions) throws IOException {
    listener = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
    thread = new Thread(() -> run(sessions), "scripted-server");
    thread.setDaemon(true);
    thread.start();
  }

  String address() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  private void run(List<List<Step>> sessions) {
    for (List<Step> session : sessions) {
      try (Socket s = listener.accept()) {
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        for (Step step : session) {
          if (step.request() != null) {
            byte[] head = in.readNBytes(4);
            if (head.length < 4) {
              mismatches.add(step.what() + ": the client closed");
              return;
            }
            int len = (head[0] & 0xff) | (head[1] & 0xff) << 8 | (head[2] & 0xff) << 16;
            byte[] rest = in.readNBytes(len);
            byte[] got = new byte[4 + rest.length];
            System.arraycopy(head, 0, got, 0, 4);
            System.arraycopy(rest, 0, got, 4, rest.length);
            if (!Arrays.equals(got, step.request())) {
              mismatches.add(step.what() + ":\n  want " + DocTables.hex(step.request())
                  + "\n  got  " + DocTables.hex(got));
              return;
            }
          }
          // Counted before the reply leaves: a client that has the reply sees the step done.
          stepsDone++;
          for (byte[] r : step.replies()) out.write(r);
          out.flush();
          if (step.closeAfter()) break;
        }
        if (session.isEmpty() || !session.get(session.size() - 1).closeAfter()) {
          // hold the connection until the client goes
          while (in.read() >= 0) {
            // discard
          }
        }
      } catch (IOException e) {
        if (!listener.isClosed()) mismatches.add("scripted server: " + e);
        return;
      }
    }
  }

  static List<List<Step>> sessions(List<Step> one) {
    List<List<Step>> out = new ArrayList<>();
    out.add(one);
    return out;
  }

  @Override
  public void close() throws IOException {
    listener.close();
  }
}
