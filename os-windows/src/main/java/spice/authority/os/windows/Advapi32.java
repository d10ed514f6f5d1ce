package spice.authority.os.windows;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import com.sun.jna.win32.StdCallLibrary;

/**
 * The door to {@code advapi32.dll}: raw JNA bindings, names verbatim, each method's Javadoc the C
 * prototype. Only {@link JnaWindowsCalls} calls it.
 *
 * <p>SECURITY: jna-platform's {@code Advapi32Util} is not used: its helpers mishandle NULL DACLs.
 * The descriptor {@code GetSecurityInfo} returns is copied as bytes and judged by
 * {@link SecurityDescriptor} and {@link DaclPolicy}.
 *
 * <p>NOT RUN: no method of this door has been called on Windows yet (see README.md).
 */
interface Advapi32 extends StdCallLibrary {

    /**
     * {@code DWORD GetSecurityInfo(HANDLE handle, SE_OBJECT_TYPE ObjectType, SECURITY_INFORMATION
     * SecurityInfo, PSID *ppsidOwner, PSID *ppsidGroup, PACL *ppDacl, PACL *ppSacl,
     * PSECURITY_DESCRIPTOR *ppSecurityDescriptor);} Returns a Win32 error code (0 on success); the
     * descriptor is self-relative and freed with {@code LocalFree}.
     */
    int GetSecurityInfo(Pointer handle, int ObjectType, int SecurityInfo, PointerByReference ppsidOwner,
                        PointerByReference ppsidGroup, PointerByReference ppDacl, PointerByReference ppSacl,
                        PointerByReference ppSecurityDescriptor);

    /** {@code DWORD GetSecurityDescriptorLength(PSECURITY_DESCRIPTOR pSecurityDescriptor);} */
    int GetSecurityDescriptorLength(Pointer pSecurityDescriptor);

    /** {@code BOOL OpenProcessToken(HANDLE ProcessHandle, DWORD DesiredAccess, PHANDLE TokenHandle);} */
    boolean OpenProcessToken(Pointer ProcessHandle, int DesiredAccess, PointerByReference TokenHandle);

    /**
     * {@code BOOL GetTokenInformation(HANDLE TokenHandle, TOKEN_INFORMATION_CLASS
     * TokenInformationClass, LPVOID TokenInformation, DWORD TokenInformationLength, PDWORD
     * ReturnLength);}
     */
    boolean GetTokenInformation(Pointer TokenHandle, int TokenInformationClass, Pointer TokenInformation,
                                int TokenInformationLength, IntByReference ReturnLength);

    /** {@code DWORD GetLengthSid(PSID pSid);} */
    int GetLengthSid(Pointer pSid);

    /** {@code BOOL IsValidSid(PSID pSid);} */
    boolean IsValidSid(Pointer pSid);
}
