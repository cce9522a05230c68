// Writes the fixtures fsbench's runner::ycsb::gen tests compare against,
// using YCSB's own classes (see README.md in this folder for the command).
// Facts only: key names, FNV hashes, data-integrity values, the zipfian
// constants, and the skew each generator shows over a million draws.

import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Properties;

import site.ycsb.Utils;
import site.ycsb.generator.CounterGenerator;
import site.ycsb.generator.HotspotIntegerGenerator;
import site.ycsb.generator.NumberGenerator;
import site.ycsb.generator.ScrambledZipfianGenerator;
import site.ycsb.generator.SkewedLatestGenerator;
import site.ycsb.generator.ZipfianGenerator;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

public class YcsbFixtures {
  static final long[] BIG = {1L << 31, (1L << 31) + 7, 1L << 40, 10000000000L, Long.MAX_VALUE};

  public static void main(String[] args) throws Exception {
    String dir = args.length > 0 ? args[0] : ".";
    keys(dir + "/keys.txt");
    integrity(dir + "/integrity.txt");
    zipfConstants(dir + "/zipf-constants.txt");
    shares(dir + "/shares.txt");
  }

  static void keys(String path) throws Exception {
    try (PrintWriter w = new PrintWriter(path)) {
      for (long k = 0; k < 200; k++) {
        emitKeys(w, k);
      }
      for (long k : BIG) {
        emitKeys(w, k);
      }
      long[] raw = {0L, 1L, -1L, Long.MIN_VALUE, 0x0123456789abcdefL, -42L};
      for (long v : raw) {
        w.println("fnv " + Long.toUnsignedString(v) + " " + Utils.fnvhash64(v));
      }
    }
  }

  static void emitKeys(PrintWriter w, long k) {
    w.println("hashed 1 " + k + " " + CoreWorkload.buildKeyName(k, 1, false));
    w.println("hashed 25 " + k + " " + CoreWorkload.buildKeyName(k, 25, false));
    w.println("ordered 1 " + k + " " + CoreWorkload.buildKeyName(k, 1, true));
    w.println("ordered 10 " + k + " " + CoreWorkload.buildKeyName(k, 10, true));
  }

  static void integrity(String path) throws Exception {
    Method build = CoreWorkload.class.getDeclaredMethod("buildDeterministicValue", String.class, String.class);
    build.setAccessible(true);
    Measurements.setProperties(new Properties());
    try (PrintWriter w = new PrintWriter(path)) {
      for (int len : new int[] {0, 5, 12, 40, 100, 777}) {
        Properties p = new Properties();
        p.setProperty("fieldlength", Integer.toString(len));
        p.setProperty("dataintegrity", "true");
        p.setProperty("recordcount", "1000");
        CoreWorkload cw = new CoreWorkload();
        cw.init(p);
        for (long k : new long[] {0, 1, 2, 999, 1L << 40}) {
          String key = CoreWorkload.buildKeyName(k, 1, false);
          for (String field : new String[] {"field0", "field9", "f"}) {
            w.println(key + "\t" + field + "\t" + len + "\t" + build.invoke(cw, key, field));
          }
        }
        w.println("user42\tfield3\t" + len + "\t" + build.invoke(cw, "user42", "field3"));
      }
    }
  }

  static double get(ZipfianGenerator g, String name) throws Exception {
    Field f = ZipfianGenerator.class.getDeclaredField(name);
    f.setAccessible(true);
    return f.getDouble(g);
  }

  static void zipfConstants(String path) throws Exception {
    Method nextLong = ZipfianGenerator.class.getDeclaredMethod("nextLong", long.class);
    nextLong.setAccessible(true);
    try (PrintWriter w = new PrintWriter(path)) {
      for (long n : new long[] {1, 2, 3, 10, 1000, 100000, 1000001}) {
        ZipfianGenerator g = new ZipfianGenerator(n);
        w.println("zeta " + n + " " + get(g, "zetan") + " " + get(g, "eta") + " " + get(g, "alpha"));
      }
      Field inner = ScrambledZipfianGenerator.class.getDeclaredField("gen");
      inner.setAccessible(true);
      ZipfianGenerator s = (ZipfianGenerator) inner.get(new ScrambledZipfianGenerator(0, 999));
      w.println("scrambled " + get(s, "zetan") + " " + get(s, "eta") + " " + get(s, "alpha"));
      // The latest generator's zipfian grows its zeta step by step.
      for (long[] grow : new long[][] {{1000, 1001}, {1000, 5000}, {99999, 100500}}) {
        ZipfianGenerator g = new ZipfianGenerator(grow[0]);
        nextLong.invoke(g, grow[1]);
        w.println("grow " + grow[0] + " " + grow[1] + " " + get(g, "zetan") + " " + get(g, "eta"));
      }
    }
  }

  // Share of `draws` on the `top` most-drawn of `n` values offset by `min`.
  static double topShare(NumberGenerator g, long min, int n, int draws, int top) {
    long[] counts = new long[n];
    for (int i = 0; i < draws; i++) {
      counts[(int) (g.nextValue().longValue() - min)]++;
    }
    Arrays.sort(counts);
    long hot = 0;
    for (int i = 0; i < top; i++) {
      hot += counts[n - 1 - i];
    }
    return (double) hot / draws;
  }

  static void shares(String path) throws Exception {
    final int n = 100000;
    final int draws = 1000000;
    try (PrintWriter w = new PrintWriter(path)) {
      for (int pct : new int[] {1, 10}) {
        int top = n * pct / 100;
        w.println("zipfian " + n + " " + draws + " " + top + " "
            + topShare(new ZipfianGenerator(n), 0, n, draws, top));
        w.println("scrambled " + n + " " + draws + " " + top + " "
            + topShare(new ScrambledZipfianGenerator(n), 0, n, draws, top));
        // Newest keys: the latest generator's values counted from the top.
        SkewedLatestGenerator l = new SkewedLatestGenerator(new CounterGenerator(n + 1));
        long newest = 0;
        for (int i = 0; i < draws; i++) {
          if (l.nextValue().longValue() > n - top) {
            newest++;
          }
        }
        w.println("latest " + n + " " + draws + " " + top + " " + ((double) newest / draws));
      }
      HotspotIntegerGenerator h = new HotspotIntegerGenerator(0, n - 1, 0.2, 0.8);
      long hot = 0;
      for (int i = 0; i < draws; i++) {
        if (h.nextValue().longValue() < n / 5) {
          hot++;
        }
      }
      w.println("hotspot " + n + " " + draws + " " + (n / 5) + " " + ((double) hot / draws));
    }
  }
}
