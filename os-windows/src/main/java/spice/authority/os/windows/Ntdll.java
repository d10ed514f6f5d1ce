package spice.authority.os.windows;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import com.sun.jna.win32.StdCallLibrary;

/**
 * The door to {@code ntdll.dll}: raw JNA bindings, names verbatim, each method's Javadoc the C
 * prototype. Only {@link JnaWindowsCalls} calls it. NT calls return an {@code NTSTATUS}; they do
 * not set the Win32 last error.
 *
 * <p>NOT RUN: no method of this door has been called on Windows yet (see README.md).
 */
interface Ntdll extends StdCallLibrary {

    /**
     * {@code NTSTATUS NtCreateFile(PHANDLE FileHandle, ACCESS_MASK DesiredAccess,
     * POBJECT_ATTRIBUTES ObjectAttributes, PIO_STATUS_BLOCK IoStatusBlock, PLARGE_INTEGER
     * AllocationSize, ULONG FileAttributes, ULONG ShareAccess, ULONG CreateDisposition, ULONG
     * CreateOptions, PVOID EaBuffer, ULONG EaLength);}
     */
    int NtCreateFile(PointerByReference FileHandle, int DesiredAccess, OBJECT_ATTRIBUTES ObjectAttributes,
                     IO_STATUS_BLOCK IoStatusBlock, Pointer AllocationSize, int FileAttributes, int ShareAccess,
                     int CreateDisposition, int CreateOptions, Pointer EaBuffer, int EaLength);

    /**
     * {@code NTSTATUS NtQueryInformationProcess(HANDLE ProcessHandle, PROCESSINFOCLASS
     * ProcessInformationClass, PVOID ProcessInformation, ULONG ProcessInformationLength, PULONG
     * ReturnLength);}
     */
    int NtQueryInformationProcess(Pointer ProcessHandle, int ProcessInformationClass,
                                  PROCESS_BASIC_INFORMATION ProcessInformation, int ProcessInformationLength,
                                  IntByReference ReturnLength);

    /** {@code ULONG RtlNtStatusToDosError(NTSTATUS Status);} */
    int RtlNtStatusToDosError(int Status);

    /**
     * {@code typedef struct _UNICODE_STRING { USHORT Length; USHORT MaximumLength; PWSTR Buffer; }
     * UNICODE_STRING;} (16 bytes on 64-bit; lengths in bytes, no terminator required)
     */
    @Structure.FieldOrder({"Length", "MaximumLength", "Buffer"})
    final class UNICODE_STRING extends Structure {
        public short Length;
        public short MaximumLength;
        public Pointer Buffer;

        public UNICODE_STRING() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /**
     * {@code typedef struct _OBJECT_ATTRIBUTES { ULONG Length; HANDLE RootDirectory;
     * PUNICODE_STRING ObjectName; ULONG Attributes; PVOID SecurityDescriptor; PVOID
     * SecurityQualityOfService; } OBJECT_ATTRIBUTES;} (48 bytes on 64-bit)
     */
    @Structure.FieldOrder({"Length", "RootDirectory", "ObjectName", "Attributes", "SecurityDescriptor",
            "SecurityQualityOfService"})
    final class OBJECT_ATTRIBUTES extends Structure {
        public int Length;
        public Pointer RootDirectory;
        public Pointer ObjectName;
        public int Attributes;
        public Pointer SecurityDescriptor;
        public Pointer SecurityQualityOfService;

        public OBJECT_ATTRIBUTES() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /**
     * {@code typedef struct _IO_STATUS_BLOCK { union { NTSTATUS Status; PVOID Pointer; };
     * ULONG_PTR Information; } IO_STATUS_BLOCK;} (16 bytes on 64-bit). The union is read through
     * its pointer-sized member.
     */
    @Structure.FieldOrder({"Pointer", "Information"})
    final class IO_STATUS_BLOCK extends Structure {
        public Pointer Pointer;
        public Pointer Information;

        public IO_STATUS_BLOCK() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }

        long information() {
            return com.sun.jna.Pointer.nativeValue(Information);
        }
    }

    /**
     * {@code typedef struct _PROCESS_BASIC_INFORMATION { NTSTATUS ExitStatus; PPEB PebBaseAddress;
     * ULONG_PTR AffinityMask; KPRIORITY BasePriority; ULONG_PTR UniqueProcessId; ULONG_PTR
     * InheritedFromUniqueProcessId; } PROCESS_BASIC_INFORMATION;} (48 bytes on 64-bit)
     */
    @Structure.FieldOrder({"ExitStatus", "PebBaseAddress", "AffinityMask", "BasePriority", "UniqueProcessId",
            "InheritedFromUniqueProcessId"})
    final class PROCESS_BASIC_INFORMATION extends Structure {
        public int ExitStatus;
        public Pointer PebBaseAddress;
        public Pointer AffinityMask;
        public int BasePriority;
        public Pointer UniqueProcessId;
        public Pointer InheritedFromUniqueProcessId;

        public PROCESS_BASIC_INFORMATION() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }
}
