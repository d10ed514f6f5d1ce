package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.jna.Native;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The JNA structures of the doors against their documented 64-bit Windows sizes and offsets
 * (Windows SDK headers; x64 and arm64 share them). JNA lays them out with MSVC alignment on every
 * host, so the check runs on Linux and macOS too; no Windows library is loaded (the door
 * interfaces' {@code INSTANCE} fields are never touched).
 */
class StructureLayoutTest {

    @BeforeAll
    static void sixtyFourBit() {
        assumeTrue(Native.POINTER_SIZE == 8, "the documented sizes are those of 64-bit Windows");
    }

    /** TcpTable's hand-written offsets are the documented ones, and JNA's MSVC layout agrees. */
    @Test
    void tcpRowOwnerModule_160bytes_matchesTcpTable() {
        Iphlpapi.MIB_TCPROW_OWNER_MODULE r = new Iphlpapi.MIB_TCPROW_OWNER_MODULE();
        assertThat(r.size()).isEqualTo(160).isEqualTo(TcpTable.ROW4);
        assertThat(r.offsetOf("dwLocalAddr")).isEqualTo(TcpTable.V4_LOCAL_ADDR).isEqualTo(4);
        assertThat(r.offsetOf("dwLocalPort")).isEqualTo(TcpTable.V4_LOCAL_PORT).isEqualTo(8);
        assertThat(r.offsetOf("dwRemoteAddr")).isEqualTo(TcpTable.V4_REMOTE_ADDR).isEqualTo(12);
        assertThat(r.offsetOf("dwRemotePort")).isEqualTo(TcpTable.V4_REMOTE_PORT).isEqualTo(16);
        assertThat(r.offsetOf("dwOwningPid")).isEqualTo(TcpTable.V4_PID).isEqualTo(20);
        assertThat(r.offsetOf("liCreateTimestamp")).isEqualTo(TcpTable.V4_CREATED).isEqualTo(24);
        assertThat(r.offsetOf("OwningModuleInfo")).isEqualTo(32);
        Iphlpapi.MIB_TCPTABLE_OWNER_MODULE t = new Iphlpapi.MIB_TCPTABLE_OWNER_MODULE();
        assertThat(t.offsetOf("table")).as("8-byte aligned rows").isEqualTo(TcpTable.HEADER).isEqualTo(8);
        assertThat(t.size()).isEqualTo(8 + 160);
    }

    @Test
    void tcp6RowOwnerModule_192bytes_matchesTcpTable() {
        Iphlpapi.MIB_TCP6ROW_OWNER_MODULE r = new Iphlpapi.MIB_TCP6ROW_OWNER_MODULE();
        assertThat(r.size()).isEqualTo(192).isEqualTo(TcpTable.ROW6);
        assertThat(r.offsetOf("ucLocalAddr")).isEqualTo(TcpTable.V6_LOCAL_ADDR).isZero();
        assertThat(r.offsetOf("dwLocalPort")).isEqualTo(TcpTable.V6_LOCAL_PORT).isEqualTo(20);
        assertThat(r.offsetOf("ucRemoteAddr")).isEqualTo(TcpTable.V6_REMOTE_ADDR).isEqualTo(24);
        assertThat(r.offsetOf("dwRemotePort")).isEqualTo(TcpTable.V6_REMOTE_PORT).isEqualTo(44);
        assertThat(r.offsetOf("dwOwningPid")).isEqualTo(TcpTable.V6_PID).isEqualTo(52);
        assertThat(r.offsetOf("liCreateTimestamp")).isEqualTo(TcpTable.V6_CREATED).isEqualTo(56);
        assertThat(r.offsetOf("OwningModuleInfo")).isEqualTo(64);
        Iphlpapi.MIB_TCP6TABLE_OWNER_MODULE t = new Iphlpapi.MIB_TCP6TABLE_OWNER_MODULE();
        assertThat(t.offsetOf("table")).isEqualTo(TcpTable.HEADER).isEqualTo(8);
        assertThat(t.size()).isEqualTo(8 + 192);
    }

    @Test
    void fileIdInfo_24bytes() {
        Kernel32.FILE_ID_INFO s = new Kernel32.FILE_ID_INFO();
        assertThat(s.size()).isEqualTo(24).isEqualTo(FileIds.FILE_ID_INFO_SIZE);
        assertThat(s.offsetOf("VolumeSerialNumber")).isZero();
        assertThat(s.offsetOf("FileId")).isEqualTo(8);
    }

    @Test
    void fileStandardInfo_24bytes() {
        Kernel32.FILE_STANDARD_INFO s = new Kernel32.FILE_STANDARD_INFO();
        assertThat(s.size()).isEqualTo(24);
        assertThat(s.offsetOf("EndOfFile")).isEqualTo(8);
        assertThat(s.offsetOf("NumberOfLinks")).isEqualTo(16);
        assertThat(s.offsetOf("DeletePending")).isEqualTo(20);
        assertThat(s.offsetOf("Directory")).isEqualTo(21);
    }

    @Test
    void fileAttributeTagInfo_8bytes() {
        assertThat(new Kernel32.FILE_ATTRIBUTE_TAG_INFO().size()).isEqualTo(8);
    }

    @Test
    void fileRenameInfo_nameAt20() {
        Kernel32.FILE_RENAME_INFO s = new Kernel32.FILE_RENAME_INFO();
        assertThat(s.offsetOf("Flags")).isZero();
        assertThat(s.offsetOf("RootDirectory")).isEqualTo(8);
        assertThat(s.offsetOf("FileNameLength")).isEqualTo(16);
        assertThat(s.offsetOf("FileName")).isEqualTo(20);
        assertThat(s.size()).isEqualTo(24);
    }

    @Test
    void overlapped_32bytes() {
        Kernel32.OVERLAPPED s = new Kernel32.OVERLAPPED();
        assertThat(s.size()).isEqualTo(32);
        assertThat(s.offsetOf("Offset")).isEqualTo(16);
        assertThat(s.offsetOf("OffsetHigh")).isEqualTo(20);
        assertThat(s.offsetOf("hEvent")).isEqualTo(24);
    }

    @Test
    void filetime_8bytes() {
        Kernel32.FILETIME t = new Kernel32.FILETIME();
        assertThat(t.size()).isEqualTo(8);
        t.dwLowDateTime = 0xffff_fffe;
        t.dwHighDateTime = 0x01db_0000;
        assertThat(t.ticks()).isEqualTo(0x01db_0000_ffff_fffeL);
    }

    @Test
    void unicodeString_16bytes() {
        Ntdll.UNICODE_STRING s = new Ntdll.UNICODE_STRING();
        assertThat(s.size()).isEqualTo(16);
        assertThat(s.offsetOf("MaximumLength")).isEqualTo(2);
        assertThat(s.offsetOf("Buffer")).isEqualTo(8);
    }

    @Test
    void objectAttributes_48bytes() {
        Ntdll.OBJECT_ATTRIBUTES s = new Ntdll.OBJECT_ATTRIBUTES();
        assertThat(s.size()).isEqualTo(48);
        assertThat(s.offsetOf("RootDirectory")).isEqualTo(8);
        assertThat(s.offsetOf("ObjectName")).isEqualTo(16);
        assertThat(s.offsetOf("Attributes")).isEqualTo(24);
        assertThat(s.offsetOf("SecurityDescriptor")).isEqualTo(32);
        assertThat(s.offsetOf("SecurityQualityOfService")).isEqualTo(40);
    }

    @Test
    void ioStatusBlock_16bytes() {
        Ntdll.IO_STATUS_BLOCK s = new Ntdll.IO_STATUS_BLOCK();
        assertThat(s.size()).isEqualTo(16);
        assertThat(s.offsetOf("Information")).isEqualTo(8);
    }

    @Test
    void processBasicInformation_48bytes() {
        Ntdll.PROCESS_BASIC_INFORMATION s = new Ntdll.PROCESS_BASIC_INFORMATION();
        assertThat(s.size()).isEqualTo(48);
        assertThat(s.offsetOf("PebBaseAddress")).isEqualTo(8);
        assertThat(s.offsetOf("BasePriority")).isEqualTo(24);
        assertThat(s.offsetOf("UniqueProcessId")).isEqualTo(32);
        assertThat(s.offsetOf("InheritedFromUniqueProcessId")).isEqualTo(40);
    }

    /** The offsets {@link DirectoryEntries} decodes with, from FILE_FULL_DIR_INFO (ntifs.h / winbase.h). */
    @Test
    void fileFullDirInfo_offsets() {
        // ULONG NextEntryOffset; ULONG FileIndex; LARGE_INTEGER x6 (8..56); ULONG FileAttributes (56);
        // ULONG FileNameLength (60); ULONG EaSize (64); WCHAR FileName[1] (68)
        assertThat(DirectoryEntries.NAME_LENGTH_OFFSET).isEqualTo(8 + 6 * 8 + 4);
        assertThat(DirectoryEntries.NAME_OFFSET).isEqualTo(DirectoryEntries.NAME_LENGTH_OFFSET + 4 + 4);
    }

    @Test
    void ntStatusSeverity() {
        assertThat(Win32.ntFailed(Win32.STATUS_SUCCESS)).isFalse();
        assertThat(Win32.ntFailed(0x00000103)).isFalse(); // STATUS_PENDING: success severity
        assertThat(Win32.ntFailed(0x40000000)).isFalse(); // informational
        assertThat(Win32.ntFailed(Win32.STATUS_STOPPED_ON_SYMLINK)).isTrue(); // warning
        assertThat(Win32.ntFailed(Win32.STATUS_REPARSE_POINT_ENCOUNTERED)).isTrue();
        assertThat(Win32.ntFailed(Win32.STATUS_OBJECT_NAME_NOT_FOUND)).isTrue();
    }
}
