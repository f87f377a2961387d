// WriteOutputFile (tessera/output_file.hpp): what users name as an output
// is written the way they mean, and a failure says why and leaves nothing
// half-written.  Found by an audit: -o /dev/null replaced the device node
// with a regular file, a full disk reported success, an output could
// overwrite the program it was compiled from.
#include "tessera/output_file.hpp"

#include <gtest/gtest.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tessera {
namespace {

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tessera-output-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The names in the folder: no temporary file may be left behind.
  std::string Names() {
    std::string names;
    DIR* d = ::opendir(dir_.c_str());
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names += std::string(e->d_name) + " ";
    ::closedir(d);
    return names;
  }
  std::string dir_;
};

TEST_F(OutputFile, NewAndReplacedFilesHoldTheData) {
  const std::string p = dir_ + "/out.bin";
  ASSERT_TRUE(WriteOutputFile(p, "first").ok());
  EXPECT_EQ(Read(p), "first");
  ::chmod(p.c_str(), 0640);
  ASSERT_TRUE(WriteOutputFile(p, "second, longer").ok());
  EXPECT_EQ(Read(p), "second, longer");
  struct stat st{};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u) << "a replaced file keeps its permissions";
  EXPECT_EQ(Names(), "out.bin ");
}

TEST_F(OutputFile, ADeviceIsWrittenNeverReplaced) {
  ASSERT_TRUE(WriteOutputFile("/dev/null", "anything").ok());
  struct stat st{};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null must stay a character device";
}

// A FIFO no process reads: the open would wait for a reader for ever (a
// program cache entry, TESSERA_TRACE or --save pointing at one hung).  With
// a reader, it is written like a pipe.
TEST_F(OutputFile, AFifoWithoutAReaderIsAnErrorNotAHang) {
  const std::string p = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  Status st = WriteOutputFile(p, "data");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("no process is reading"), std::string::npos) << st.ToString();
  struct stat sb{};
  ASSERT_EQ(::stat(p.c_str(), &sb), 0);
  EXPECT_TRUE(S_ISFIFO(sb.st_mode)) << "the FIFO must stay a FIFO";
  const int reader = ::open(p.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(WriteOutputFile(p, "data").ok());
  char got[8] = {};
  EXPECT_EQ(::read(reader, got, sizeof got), 4);
  EXPECT_STREQ(got, "data");
  ::close(reader);
}

TEST_F(OutputFile, AFullDiskIsAnErrorWithItsReason) {
  Status st = WriteOutputFile("/dev/full", std::string(1 << 16, 'x'));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("No space left on device"), std::string::npos) << st.ToString();
}

TEST_F(OutputFile, FoldersAndMissingFoldersAreErrorsThatSaySo) {
  Status st = WriteOutputFile(dir_, "x");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is a folder"), std::string::npos) << st.ToString();
  st = WriteOutputFile(dir_ + "/nope/out.bin", "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("does it exist?"), std::string::npos) << st.ToString();
  EXPECT_EQ(Names(), "");
  EXPECT_FALSE(WriteOutputFile("", "x").ok());
}

TEST_F(OutputFile, ALinkStaysALinkToTheWrittenFile) {
  const std::string link = dir_ + "/link", target = dir_ + "/target";
  ASSERT_EQ(::symlink("target", link.c_str()), 0);  // dangling: made there
  ASSERT_TRUE(WriteOutputFile(link, "via the link").ok());
  struct stat st{};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Read(target), "via the link");
  ASSERT_TRUE(WriteOutputFile(link, "again").ok());  // existing target
  EXPECT_EQ(Read(target), "again");
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST_F(OutputFile, SameFileSeesThroughSpellings) {
  const std::string p = dir_ + "/a.mlir";
  ASSERT_TRUE(WriteOutputFile(p, "x").ok());
  EXPECT_TRUE(SameFile(p, dir_ + "/./a.mlir"));
  EXPECT_TRUE(SameFile(p, dir_ + "/../" + dir_.substr(dir_.rfind('/') + 1) + "/a.mlir"));
  EXPECT_FALSE(SameFile(p, dir_ + "/b.mlir"));  // does not exist
  EXPECT_FALSE(SameFile(p, dir_));
}

}  // namespace
}  // namespace tessera
