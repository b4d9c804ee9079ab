package offline

var spanish, french, german, portuguese = clone("spanish"), clone("french"), clone("german"), clone("portuguese")

func clone(name string) book { b := english; b.Name = name; return b }
