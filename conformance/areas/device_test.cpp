// Area "device": devices enumerate, and what they claim is self-consistent.
// Every other area trusts DeviceInfo to decide what is unsupported, so a
// capability that lies is caught here or in the area that uses it.
#include "cts/cts.hpp"

namespace tessera::cts {
namespace device_area {

class Device : public CtsTest {};

TEST_F(Device, EnumeratesAtLeastOneDevice) {
  ASSERT_FALSE(devices().empty());
  EXPECT_FALSE(runtime().backend().empty()) << "the plugin reports no name";
}

TEST_F(Device, IdentityIsFilledIn) {
  for (const tessera::Device& d : devices()) {
    const DeviceInfo& i = d.info();
    EXPECT_FALSE(i.name.empty()) << "device " << i.ordinal << " has no name";
    EXPECT_FALSE(i.vendor.empty()) << "device " << i.name << " has no vendor";
    EXPECT_LE(static_cast<int>(i.type), static_cast<int>(TS_DEVICE_TYPE_SOFTWARE));
  }
}

TEST_F(Device, OrdinalsAreDistinct) {
  for (size_t a = 0; a < devices().size(); ++a)
    for (size_t b = a + 1; b < devices().size(); ++b)
      EXPECT_NE(devices()[a].info().ordinal, devices()[b].info().ordinal);
}

TEST_F(Device, CapabilitiesAreConsistent) {
  for (const tessera::Device& d : devices()) {
    const DeviceInfo& i = d.info();
    SCOPED_TRACE(i.name);
    EXPECT_TRUE(i.supports(TS_BUFFER_DEVICE)) << "device memory is mandatory";
    EXPECT_GT(i.total_memory, 0u);
    EXPECT_GE(i.max_group_size, 1u);
    EXPECT_GE(i.subgroup_size, 1u);
    EXPECT_LE(i.subgroup_size, i.max_group_size);
    EXPECT_GE(i.compute_units, 1u);
    EXPECT_EQ(i.buffer_kinds & ~0x7u, 0u) << "unknown buffer kind bits";
    EXPECT_EQ(i.atomic_scopes & ~0xFu, 0u) << "unknown atomic scope bits";
    EXPECT_LE(static_cast<int>(i.prefetch_hint), static_cast<int>(TS_HINT_APPLIED));
    EXPECT_LE(static_cast<int>(i.advise_hint), static_cast<int>(TS_HINT_APPLIED));
    // Real unified memory implies the managed kind.
    if (i.managed_memory) {
      EXPECT_TRUE(i.supports(TS_BUFFER_MANAGED));
    }
    // Deterministic collectives without any collective make no sense.
    if (i.collectives & TS_COLLECTIVE_CAP_DETERMINISTIC) {
      EXPECT_NE(i.collectives & 0xFu, 0u);
    }
    // A hint can only be "applied" on real unified memory.
    if (i.prefetch_hint == TS_HINT_APPLIED) {
      EXPECT_TRUE(i.managed_memory);
    }
    for (const std::string& f : i.executable_formats) {
      EXPECT_FALSE(f.empty());
      EXPECT_EQ(f.find_first_of(" ,\t"), std::string::npos)
          << "format '" << f << "' was not split/trimmed";
    }
  }
}

TEST_F(Device, DevicesOfOnePluginAgreeOnPeerCopy) {
  CTS_REQUIRE(devices().size() >= 2, "devices>=2 (for cpu: TESSERA_CPU_DEVICES)");
  for (const tessera::Device& d : devices())
    EXPECT_EQ(d.info().peer_copy, devices()[0].info().peer_copy);
}

TEST_F(Device, DefaultStreamExistsAndSynchronizes) {
  Stream s = device().default_stream();
  EXPECT_TRUE(s.valid());
  EXPECT_TRUE(s.is_default());
  CTS_EXPECT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(bool idle, s.query());
  EXPECT_TRUE(idle);
  CTS_EXPECT_OK(device().synchronize());
}

TEST_F(Device, EveryDeviceSynchronizesWhenIdle) {
  for (const tessera::Device& d : devices()) CTS_EXPECT_OK(d.synchronize());
}

TEST_F(Device, ExecutableFormatsAreListed) {
  // A device without any format cannot run kernels at all: allowed, but
  // then the kernels and layouts areas are unsupported.
  CTS_REQUIRE(!info().executable_formats.empty(), "executable_formats");
  SUCCEED();
}

}  // namespace device_area
}  // namespace tessera::cts
