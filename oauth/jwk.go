package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// The two signature algorithms private_key_jwt clients are held to:
// RS256 (ChatGPT's client metadata document names it) and ES256.
const (
	algRS256 = "RS256"
	algES256 = "ES256"
)

// minRSABits is the smallest RSA key accepted.
const minRSABits = 2048

// jwk is one JSON Web Key (RFC 7517) as a key set carries it.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// verifyKeys are the keys of a set that may check a signature by alg
// (and kid, when the header names one).
func verifyKeys(set []byte, alg, kid string) ([]crypto.PublicKey, error) {
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(set, &doc); err != nil {
		return nil, errors.New("the key set is not a JSON Web Key Set")
	}
	var out []crypto.PublicKey
	for _, k := range doc.Keys {
		if kid != "" && k.Kid != kid || k.Use != "" && k.Use != "sig" || k.Alg != "" && k.Alg != alg {
			continue
		}
		var (
			key crypto.PublicKey
			err error
		)
		switch {
		case alg == algRS256 && k.Kty == "RSA":
			key, err = k.rsa()
		case alg == algES256 && k.Kty == "EC":
			key, err = k.p256()
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", clip(k.Kid), err)
		}
		out = append(out, key)
	}
	return out, nil
}

func (k jwk) rsa() (*rsa.PublicKey, error) {
	n, err1 := b64int(k.N)
	e, err2 := b64int(k.E)
	if err1 != nil || err2 != nil || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
		return nil, errors.New("not an RSA public key")
	}
	if n.BitLen() < minRSABits {
		return nil, fmt.Errorf("an RSA key of %d bits; at least %d are required", n.BitLen(), minRSABits)
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

func (k jwk) p256() (*ecdsa.PublicKey, error) {
	if k.Crv != "P-256" {
		return nil, fmt.Errorf("curve %q; ES256 needs P-256", clip(k.Crv))
	}
	x, err1 := base64.RawURLEncoding.DecodeString(k.X)
	y, err2 := base64.RawURLEncoding.DecodeString(k.Y)
	if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
		return nil, errors.New("not a P-256 public key")
	}
	// The uncompressed point form checks that the point is on the curve.
	raw := append(append([]byte{4}, x...), y...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return nil, errors.New("not a point of P-256")
	}
	return pub, nil
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("not base64url")
	}
	return new(big.Int).SetBytes(b), nil
}

// verifySignature checks a JWS signature over signingInput with key.
func verifySignature(alg string, key crypto.PublicKey, signingInput string, sig []byte) bool {
	sum := sha256.Sum256([]byte(signingInput))
	switch k := key.(type) {
	case *rsa.PublicKey:
		return alg == algRS256 && rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) == nil
	case *ecdsa.PublicKey:
		// JWS carries r||s, 32 bytes each (RFC 7518 §3.4), not ASN.1.
		if alg != algES256 || len(sig) != 64 {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k, sum[:], r, s)
	}
	return false
}
