#pragma once
// A synthetic but realistic stream of file events for the benchmark.
//
// Real file activity is not uniform, and the store's cost depends on that, so
// the generator models what a busy Windows machine does:
// - a few hundred processes with Zipf-distributed activity: a handful (a
//   database, an antivirus scanner, a build) produce most events;
// - a process works in bursts (on average 64 events) before the scheduler moves
//   on to another;
// - each process has its own working set of files (its sources, its database
//   files, its logs), drawn with a Zipf popularity, and 10% of its accesses go
//   to files every process shares (DLLs, fonts, registry hives), also Zipf;
// - once a process picks a file it performs a run of operations on it
//   (on average 8): mostly sequential reads or writes of 4 KiB to 64 KiB with
//   advancing offsets, framed by open/close and the odd set_info or flush;
// - time only moves forward, with exponential gaps at an average rate of
//   --rate events per second; with a daily cycle that rate swings from a
//   fifth of it at 03:00 to nine fifths of it at 15:00.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

class Random {  // xoshiro256** : fast, good enough, reproducible everywhere
 public:
  explicit Random(std::uint64_t seed) {
    for (auto& word : m_state) {
      seed += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      word = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(m_state[1] * 5, 7) * 9;
    const std::uint64_t t = m_state[1] << 17;
    m_state[2] ^= m_state[0];
    m_state[3] ^= m_state[1];
    m_state[1] ^= m_state[2];
    m_state[0] ^= m_state[3];
    m_state[2] ^= t;
    m_state[3] = rotl(m_state[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Geometric number of trials with the given mean (>= 1).
  std::uint64_t geometric(double mean) {
    return 1 + static_cast<std::uint64_t>(std::log(1.0 - uniform()) / std::log(1.0 - 1.0 / mean));
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t m_state[4];
};

class Zipf {  // sampling by inverse CDF
 public:
  Zipf(std::size_t n, double exponent) : m_cdf(n) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) m_cdf[i] = (sum += 1.0 / std::pow(static_cast<double>(i + 1), exponent));
    for (auto& value : m_cdf) value /= sum;
  }
  std::size_t sample(Random& random) const {
    return std::min<std::size_t>(std::upper_bound(m_cdf.begin(), m_cdf.end(), random.uniform()) - m_cdf.begin(),
                                 m_cdf.size() - 1);
  }

 private:
  std::vector<double> m_cdf;
};

struct StreamEvent {
  std::int64_t time;      // ns since epoch
  std::int64_t offset;    // -1 when none
  std::int64_t size;      // -1 when none
  std::uint32_t process;  // index into Stream::processes()
  std::uint32_t file;     // index into Stream::paths()
  std::uint32_t tid;
  std::uint8_t op;  // etwaudit::Op value
};

struct StreamProcess {
  std::uint32_t pid;
  std::int64_t start_time;
  std::string image;
};

struct StreamShape {
  std::size_t processes = 300;
  std::size_t files = 50000;
  double rate = 2000;        // events per simulated second (the mean, with daily_cycle)
  bool daily_cycle = false;  // busy afternoons, quiet nights: the rate follows the time of day
  std::uint64_t seed = 1;
};

class Stream {
 public:
  explicit Stream(const StreamShape& shape);
  StreamEvent next();
  const std::vector<std::string>& paths() const { return m_paths; }
  const std::vector<StreamProcess>& processes() const { return m_processes; }

 private:
  void start_burst();
  void start_run();

  StreamShape m_shape;
  Random m_random;
  std::vector<std::string> m_paths;
  std::vector<StreamProcess> m_processes;
  std::size_t m_shared_files;  // paths[0, m_shared_files) are shared by all
  Zipf m_process_activity, m_shared_popularity, m_own_popularity;
  std::int64_t m_time;
  // current burst and run
  std::uint32_t m_process = 0;
  std::uint64_t m_burst_left = 0;
  std::uint32_t m_file = 0;
  std::uint64_t m_run_left = 0;
  std::uint8_t m_run_op = 0;
  std::int64_t m_offset = 0;
  std::int64_t m_chunk = 4096;
};

}  // namespace bench
