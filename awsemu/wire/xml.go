package wire

import (
	"encoding/xml"
	"net/http"
)

// EC2Namespace is the XML namespace of EC2 responses.
const EC2Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// WriteXML writes v as an XML document with status 200.
func WriteXML(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	body, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(body)
}

type ec2ErrorResponse struct {
	XMLName   xml.Name `xml:"Response"`
	Errors    []ec2Err `xml:"Errors>Error"`
	RequestID string   `xml:"RequestID"`
}

type ec2Err struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// WriteEC2Error writes err in EC2's envelope: `<Response><Errors><Error>…</Error></Errors>`.
func WriteEC2Error(w http.ResponseWriter, requestID string, err error) {
	e := AsError(err)
	writeStatusXML(w, e.Status, ec2ErrorResponse{Errors: []ec2Err{{Code: e.Code, Message: e.Message}}, RequestID: requestID})
}

type queryErrorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Error     queryErr `xml:"Error"`
	RequestID string   `xml:"RequestId"`
}

type queryErr struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// WriteQueryError writes err in the AWS query envelope used by IAM and STS:
// `<ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>`.
func WriteQueryError(w http.ResponseWriter, requestID string, err error) {
	e := AsError(err)
	typ := "Receiver"
	if e.Sender {
		typ = "Sender"
	}
	writeStatusXML(w, e.Status, queryErrorResponse{Error: queryErr{Type: typ, Code: e.Code, Message: e.Message}, RequestID: requestID})
}

func writeStatusXML(w http.ResponseWriter, status int, v any) {
	body, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(body)
}

// ResponseMetadata is the AWS query response trailer.
type ResponseMetadata struct {
	RequestID string `xml:"RequestId"`
}
